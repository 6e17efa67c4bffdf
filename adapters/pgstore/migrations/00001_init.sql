-- The schema of climatesearch on PostgreSQL (adapters/pgstore). Applied by
-- goose at pgstore.Open under a session advisory lock; never edit a
-- migration once released, add the next one.
--
-- Identifiers that the store orders by (resource ids, event ids,
-- destination ids) are COLLATE "C": byte order, as in the badger store,
-- whatever the database's locale.

-- +goose Up

-- One row per catalog: its metadata (core.CatalogMeta as JSON, without the
-- counter) and the change counter, which Apply locks (FOR UPDATE), checks
-- against Changes.IfCounter and advances by one for each write that puts
-- resources.
CREATE TABLE catalogs (
    catalog text COLLATE "C" PRIMARY KEY,
    meta    json,
    counter bigint NOT NULL DEFAULT 0
);

-- Resources, never deleted (a withdrawn resource keeps its row). body is
-- the JSON of core.Resource (json, not jsonb: kept byte for byte, \u0000
-- included); stamp is the catalog counter of the write that last put it
-- (ChangeFeed.Since).
CREATE TABLE resources (
    catalog text COLLATE "C" NOT NULL,
    id      text COLLATE "C" NOT NULL,
    hash    text NOT NULL,
    body    json NOT NULL,
    stamp   bigint NOT NULL,
    PRIMARY KEY (catalog, id)
);
CREATE INDEX resources_stamp ON resources (catalog, stamp);

-- Vectors per embedder: little-endian float32s.
CREATE TABLE vectors (
    embedder text COLLATE "C" NOT NULL,
    catalog  text COLLATE "C" NOT NULL,
    id       text COLLATE "C" NOT NULL,
    hash     text NOT NULL,
    vec      bytea NOT NULL,
    PRIMARY KEY (embedder, catalog, id)
);

-- Small values with an optional expiry (PutTTL, GetKV).
CREATE TABLE kv (
    key        text COLLATE "C" PRIMARY KEY,
    value      bytea NOT NULL,
    expires_at timestamptz
);

-- Uploaded files kept for a preview (ports.FileStash).
CREATE TABLE stash (
    id         text COLLATE "C" PRIMARY KEY,
    filename   text NOT NULL,
    data       bytea NOT NULL,
    stashed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

-- Spent payment challenges ('ch') and references ('ref').
CREATE TABLE payments_spent (
    kind       text NOT NULL,
    key        text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (kind, key)
);

-- Webhooks: destinations, the outbox, fanned-out markers, the delivery
-- queue, the delivery log and the event history (see webhooks.go).
CREATE TABLE webhook_destinations (
    id         text COLLATE "C" PRIMARY KEY,
    created_at timestamptz NOT NULL,
    body       json NOT NULL
);

-- Every recorded event, by id. seen_until is null while the event waits
-- in the outbox; FanOut sets it (in the same statement that claims the
-- event, so two replicas fanning out one event queue it once), and the row
-- then keeps RecordEvent from recording the event again until it expires.
CREATE TABLE webhook_events (
    event_id   text COLLATE "C" PRIMARY KEY,
    body       json NOT NULL,
    seen_until timestamptz
);
CREATE INDEX webhook_events_outbox ON webhook_events (event_id) WHERE seen_until IS NULL;
CREATE INDEX webhook_events_seen ON webhook_events (seen_until) WHERE seen_until IS NOT NULL;

-- One queued delivery per (destination, event). lease_owner and
-- lease_until are for replicas that claim a delivery (FOR UPDATE SKIP
-- LOCKED) before attempting it; null when nobody holds it.
CREATE TABLE webhook_deliveries (
    destination_id text COLLATE "C" NOT NULL,
    event_id       text COLLATE "C" NOT NULL,
    next_attempt   timestamptz NOT NULL,
    body           json NOT NULL,
    lease_owner    text,
    lease_until    timestamptz,
    PRIMARY KEY (destination_id, event_id)
);
CREATE INDEX webhook_deliveries_next ON webhook_deliveries (next_attempt);

-- at_ns is the attempt's time in Unix nanoseconds (timestamptz keeps
-- microseconds); the newest core.MaxDeliveryLog per destination are kept.
CREATE TABLE webhook_attempts (
    destination_id text COLLATE "C" NOT NULL,
    at_ns          bigint NOT NULL,
    event_id       text COLLATE "C" NOT NULL,
    body           json NOT NULL,
    PRIMARY KEY (destination_id, at_ns, event_id)
);

CREATE TABLE webhook_history (
    event_id text COLLATE "C" PRIMARY KEY,
    body     json NOT NULL
);

-- +goose Down
DROP TABLE webhook_history;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_destinations;
DROP TABLE payments_spent;
DROP TABLE stash;
DROP TABLE kv;
DROP TABLE vectors;
DROP TABLE resources;
DROP TABLE catalogs;
