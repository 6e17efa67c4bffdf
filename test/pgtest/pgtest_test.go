package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// A cluster of one's own stops and starts again on the same port and
// data; the shared one serves fresh databases.
func TestClusterRestartAndDatabases(t *testing.T) {
	ctx := context.Background()
	c := Start(t)
	url := c.NewDB(t)
	exec := func(sql string) error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(`CREATE TABLE x (a int); INSERT INTO x VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := exec(`SELECT 1`); err == nil {
		t.Fatal("a stopped cluster answered")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := exec(`INSERT INTO x VALUES (2)`); err != nil {
		t.Fatalf("after restart: %v", err)
	}

	s := Shared(t)
	a, b := s.NewDB(t), s.NewDB(t)
	if a == b {
		t.Fatalf("two tests share database %s", a)
	}
}
