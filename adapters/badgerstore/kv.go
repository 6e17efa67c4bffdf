package badgerstore

import (
	"context"
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// PutTTL stores value under kv/<key>. With ttl > 0 the value expires after
// at least ttl and at most ttl plus one second (Badger keeps expiry in whole
// seconds, rounded up here so a value never vanishes early); ttl <= 0 keeps
// it forever.
func (s *Store) PutTTL(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	e := badger.NewEntry([]byte(kvPrefix+key), value)
	if ttl > 0 {
		at := time.Now().Add(ttl)
		secs := at.Unix()
		if at.Nanosecond() > 0 {
			secs++
		}
		e.ExpiresAt = uint64(secs)
	}
	err := s.db.Update(func(txn *badger.Txn) error { return txn.SetEntry(e) })
	if err == nil {
		s.wrote(valueBytes(len(value)))
	}
	return s.writeErr("kv put "+key, err)
}

// GetKV returns the value under kv/<key>; ok is false when it is absent or
// expired.
func (s *Store) GetKV(ctx context.Context, key string) (value []byte, ok bool, err error) {
	if err := s.enter(ctx); err != nil {
		return nil, false, err
	}
	defer s.leave()
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(kvPrefix + key))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return storeErr("kv get "+key, err)
		}
		value, err = item.ValueCopy(nil)
		ok = err == nil
		return err
	})
	return value, ok, err
}

// DeleteKV removes kv/<key>; an absent key is no error.
func (s *Store) DeleteKV(ctx context.Context, key string) error {
	if err := s.enterWrite(ctx); err != nil {
		return err
	}
	defer s.leaveWrite()
	err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete([]byte(kvPrefix + key)) })
	return s.writeErr("kv delete "+key, err)
}

// TakeKV returns the value under kv/<key> and deletes it in one update
// transaction; of two concurrent takes, Badger fails the second to commit
// with a conflict, and its retry finds the key gone. An expired value is
// not found, so not taken.
func (s *Store) TakeKV(ctx context.Context, key string) (value []byte, ok bool, err error) {
	if err := s.enterWrite(ctx); err != nil {
		return nil, false, err
	}
	defer s.leaveWrite()
	k := []byte(kvPrefix + key)
	err = s.updateRetry(ctx, func(txn *badger.Txn) error {
		value, ok = nil, false
		item, err := txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		if err := txn.Delete(k); err != nil {
			return err
		}
		value, ok = v, true
		return nil
	})
	if err != nil {
		return nil, false, s.writeErr("kv take "+key, err)
	}
	return value, ok, nil
}
