-- Trove sync: the whole server side, for PostgreSQL 15 or later. Documentation/SYNC.md, "Server schema".
--
-- Install with `trove sync setup-server URL` or `psql URL -f trove-sync.sql`, as a role that may
-- create schemas and roles. Idempotent: running it again changes nothing, so it is safe on every
-- deploy. The server stores sealed change sets only (ciphertext, sizes, opaque device ids and
-- sequence numbers); it never sees a key or a clear-text field.
--
-- Devices log in with roles of their own (per user or per device) that are members of
-- trove_sync_device:
--     CREATE ROLE alice_laptop LOGIN PASSWORD '...' IN ROLE trove_sync_device;
-- Row-level security lets each role read and write only the spaces it is a member of; the
-- functions below run as the caller (SECURITY INVOKER), so the policies guard them too.

BEGIN;
SET LOCAL client_min_messages = warning;

-- Two installs at once (two deploys) wait for each other instead of failing.
SELECT pg_advisory_xact_lock(7369921456218);

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'trove_sync_device') THEN
        CREATE ROLE trove_sync_device NOLOGIN;
    END IF;
END
$$;

CREATE SCHEMA IF NOT EXISTS trove_sync;

-- A re-install while devices push and pull: take every table's lock at once, in the order push
-- and pull take them (spaces first), so the policy changes below cannot deadlock with them.
DO $$
BEGIN
    IF to_regclass('trove_sync.changes') IS NOT NULL THEN
        LOCK TABLE trove_sync.spaces, trove_sync.members, trove_sync.changes IN ACCESS EXCLUSIVE MODE;
    END IF;
    IF to_regclass('trove_sync.snapshots') IS NOT NULL THEN
        LOCK TABLE trove_sync.snapshots, trove_sync.snapshot_parts, trove_sync.cursors IN ACCESS EXCLUSIVE MODE;
    END IF;
    IF to_regclass('trove_sync.devices') IS NOT NULL THEN
        LOCK TABLE trove_sync.devices, trove_sync.wrapped_keys IN ACCESS EXCLUSIVE MODE;
    END IF;
END
$$;
REVOKE ALL ON SCHEMA trove_sync FROM PUBLIC;
GRANT USAGE ON SCHEMA trove_sync TO trove_sync_device;

-- A space: one shared set of synced collections with one key (which stays on the devices).
-- last_sequence is the feed's counter; a push locks this row, so pushes to one space commit in
-- sequence order and a pull never sees sequence n+1 before n.
CREATE TABLE IF NOT EXISTS trove_sync.spaces (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
    owner name NOT NULL DEFAULT current_user,
    last_sequence bigint NOT NULL DEFAULT 0
);
-- The key check (schema version 2): a constant sealed with the space's key by the first device
-- that syncs it, which every device opens before it pushes or pulls, so a device with a wrong
-- key is refused before it sends anything (a change set sealed with a wrong key would be
-- unreadable for everyone else). Ciphertext: the server learns nothing of the key from it.
ALTER TABLE trove_sync.spaces ADD COLUMN IF NOT EXISTS key_check bytea
    CHECK (octet_length(key_check) BETWEEN 1 AND 1024);

-- Which roles may read and write a space's feed.
CREATE TABLE IF NOT EXISTS trove_sync.members (
    space_id bigint NOT NULL REFERENCES trove_sync.spaces (id) ON DELETE CASCADE,
    role_name name NOT NULL,
    PRIMARY KEY (space_id, role_name)
);
CREATE INDEX IF NOT EXISTS members_by_role ON trove_sync.members (role_name, space_id);

-- The append-only feed: one row per sealed change set. server_sequence counts from 1 without
-- gaps in each space; (space, device, device_sequence) is unique, which makes a push idempotent.
-- No foreign key to spaces: the row-level security check already proves membership (so the space
-- exists), and a per-row key check would slow every push.
CREATE TABLE IF NOT EXISTS trove_sync.changes (
    space_id bigint NOT NULL,
    server_sequence bigint NOT NULL,
    device text NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    device_sequence bigint NOT NULL CHECK (device_sequence >= 1),
    payload bytea NOT NULL,
    size integer GENERATED ALWAYS AS (octet_length(payload)) STORED,
    PRIMARY KEY (space_id, server_sequence),
    UNIQUE (space_id, device, device_sequence)
);
-- Ciphertext does not compress: store it out of line without trying.
ALTER TABLE trove_sync.changes ALTER COLUMN payload SET STORAGE EXTERNAL;

-- Schema version 3: snapshots, cursors and pruning (Documentation/SYNC.md, "Scale").
-- pruned_up_to: every change set at or below it may be gone from the feed (pruned); a device
-- whose cursor is below it starts again from the newest snapshot.
ALTER TABLE trove_sync.spaces ADD COLUMN IF NOT EXISTS pruned_up_to bigint NOT NULL DEFAULT 0;

-- Server-wide settings, one row, changed by the administrator in SQL:
--     UPDATE trove_sync.settings SET prune_horizon = '30 days';
-- prune_horizon: a device not seen for longer has no say in pruning (it starts again from the
-- snapshot when it comes back).
CREATE TABLE IF NOT EXISTS trove_sync.settings (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    prune_horizon interval NOT NULL DEFAULT '90 days' CHECK (prune_horizon >= interval '0')
);
INSERT INTO trove_sync.settings (one) VALUES (true) ON CONFLICT DO NOTHING;

-- A sealed snapshot of a device's merge state, covering the feed up to up_to_sequence, in parts
-- (each sealed on its own, a few MB). complete once every part is stored; devices read only
-- complete ones, the newest first.
CREATE TABLE IF NOT EXISTS trove_sync.snapshots (
    space_id bigint NOT NULL REFERENCES trove_sync.spaces (id) ON DELETE CASCADE,
    up_to_sequence bigint NOT NULL CHECK (up_to_sequence >= 0),
    device text NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    parts integer NOT NULL CHECK (parts BETWEEN 1 AND 1000000),
    size bigint NOT NULL DEFAULT 0,
    complete boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (space_id, up_to_sequence, device)
);
CREATE TABLE IF NOT EXISTS trove_sync.snapshot_parts (
    space_id bigint NOT NULL,
    up_to_sequence bigint NOT NULL,
    device text NOT NULL,
    part integer NOT NULL CHECK (part >= 0),
    payload bytea NOT NULL,
    PRIMARY KEY (space_id, up_to_sequence, device, part),
    FOREIGN KEY (space_id, up_to_sequence, device)
        REFERENCES trove_sync.snapshots (space_id, up_to_sequence, device) ON DELETE CASCADE
);
ALTER TABLE trove_sync.snapshot_parts ALTER COLUMN payload SET STORAGE EXTERNAL;

-- How far each device has pulled, and when it last said so (report_cursor).
CREATE TABLE IF NOT EXISTS trove_sync.cursors (
    space_id bigint NOT NULL REFERENCES trove_sync.spaces (id) ON DELETE CASCADE,
    device text NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    pulled_up_to bigint NOT NULL,
    seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (space_id, device)
);

-- Schema version 4: devices as members, with keys of their own (Documentation/SYNC.md,
-- "Membership and keys"). key_epoch: the epoch new change sets are sealed under; removing a
-- device starts the next one, whose key is wrapped for the remaining devices only.
ALTER TABLE trove_sync.spaces ADD COLUMN IF NOT EXISTS key_epoch bigint NOT NULL DEFAULT 0
    CHECK (key_epoch >= 0);

-- A space's devices: each one's X25519 public key and a certificate (its id and key sealed under
-- a key of the space by a member, so a device the server made up is never given a key), and the
-- epoch that removed it. role_name: the role the device syncs as (a person, when shared), once it
-- registered itself; before that, the role of the member that added it.
CREATE TABLE IF NOT EXISTS trove_sync.devices (
    space_id bigint NOT NULL REFERENCES trove_sync.spaces (id) ON DELETE CASCADE,
    device text NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    public_key bytea NOT NULL CHECK (octet_length(public_key) = 32),
    certificate bytea NOT NULL CHECK (octet_length(certificate) BETWEEN 1 AND 1024),
    removed_in bigint CHECK (removed_in >= 1),
    role_name name NOT NULL DEFAULT current_user,
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (space_id, device)
);

-- Each epoch's key wrapped for each member device (ciphertext only its private key opens).
CREATE TABLE IF NOT EXISTS trove_sync.wrapped_keys (
    space_id bigint NOT NULL REFERENCES trove_sync.spaces (id) ON DELETE CASCADE,
    epoch bigint NOT NULL CHECK (epoch >= 0),
    device text NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    wrapped_by text NOT NULL CHECK (length(wrapped_by) BETWEEN 1 AND 200),
    payload bytea NOT NULL CHECK (octet_length(payload) BETWEEN 1 AND 1024),
    PRIMARY KEY (space_id, epoch, device)
);

-- The key epoch a sealed payload names: its header ("TSE1" and the epoch, big-endian) when it
-- has one, else 0 (Documentation/SYNC.md, "Membership and keys"). Read only while the space is
-- past epoch 0, where every payload a member seals has a header.
CREATE OR REPLACE FUNCTION trove_sync.payload_epoch(payload bytea) RETURNS bigint
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN octet_length(payload) >= 12 AND substring(payload FROM 1 FOR 4) = '\x54534531'::bytea
                THEN ('x' || encode(substring(payload FROM 5 FOR 8), 'hex'))::bit(64)::bigint
                ELSE 0 END
$$;

-- The highest server sequence that may be pruned from a space's feed: at or below the newest
-- complete snapshot and the smallest cursor of the devices seen within the horizon (0 without a
-- snapshot). Runs as the caller: row-level security shows it only its own spaces' rows.
CREATE OR REPLACE FUNCTION trove_sync.prune_bound(space_key bigint) RETURNS bigint
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE WHEN snap.up_to IS NULL THEN 0
                ELSE least(snap.up_to, coalesce(live.slowest, snap.up_to)) END
    FROM (SELECT max(s.up_to_sequence) AS up_to FROM trove_sync.snapshots s
          WHERE s.space_id = space_key AND s.complete) snap,
         (SELECT min(c.pulled_up_to) AS slowest FROM trove_sync.cursors c
          WHERE c.space_id = space_key
            AND c.seen_at >= now() - (SELECT t.prune_horizon FROM trove_sync.settings t)) live
$$;

-- Row-level security. The table owner (the installing role) bypasses it; device roles do not.
ALTER TABLE trove_sync.spaces ENABLE ROW LEVEL SECURITY;
ALTER TABLE trove_sync.members ENABLE ROW LEVEL SECURITY;
ALTER TABLE trove_sync.changes ENABLE ROW LEVEL SECURITY;
ALTER TABLE trove_sync.snapshots ENABLE ROW LEVEL SECURITY;
ALTER TABLE trove_sync.snapshot_parts ENABLE ROW LEVEL SECURITY;
ALTER TABLE trove_sync.cursors ENABLE ROW LEVEL SECURITY;
ALTER TABLE trove_sync.devices ENABLE ROW LEVEL SECURITY;
ALTER TABLE trove_sync.wrapped_keys ENABLE ROW LEVEL SECURITY;

-- Devices, wrapped keys, snapshots, their parts and cursors: members of the space read and
-- write them (any member adds and removes devices; what those rows hold is public keys and
-- ciphertext). One policy per table, `<table>_member`.
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['devices', 'wrapped_keys', 'snapshots', 'snapshot_parts', 'cursors'] LOOP
        EXECUTE format('DROP POLICY IF EXISTS %I ON trove_sync.%I', t || '_member', t);
        EXECUTE format(
            'CREATE POLICY %I ON trove_sync.%I FOR ALL '
            'USING (space_id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user)) '
            'WITH CHECK (space_id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user))',
            t || '_member', t);
    END LOOP;
END
$$;

-- A role sees the spaces it owns or is a member of, and only its own membership rows (a policy
-- on members that looked at other members would recurse).
DROP POLICY IF EXISTS spaces_visible ON trove_sync.spaces;
CREATE POLICY spaces_visible ON trove_sync.spaces FOR SELECT
    USING (owner = current_user
        OR id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user));
DROP POLICY IF EXISTS spaces_created ON trove_sync.spaces;
CREATE POLICY spaces_created ON trove_sync.spaces FOR INSERT
    WITH CHECK (owner = current_user);
DROP POLICY IF EXISTS spaces_counted ON trove_sync.spaces;
CREATE POLICY spaces_counted ON trove_sync.spaces FOR UPDATE
    USING (id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user));

DROP POLICY IF EXISTS members_visible ON trove_sync.members;
CREATE POLICY members_visible ON trove_sync.members FOR SELECT
    USING (role_name = current_user);
DROP POLICY IF EXISTS members_added ON trove_sync.members;
CREATE POLICY members_added ON trove_sync.members FOR INSERT
    WITH CHECK (space_id IN (SELECT s.id FROM trove_sync.spaces s WHERE s.owner = current_user));

-- The feed's read and insert checks run for every change set pulled or pushed: the caller's
-- spaces are read once per statement into an array, which each row is compared with (a hashed
-- subplan, what `IN (SELECT ...)` becomes, costs about as much per row as the scan itself).
DROP POLICY IF EXISTS changes_read ON trove_sync.changes;
CREATE POLICY changes_read ON trove_sync.changes FOR SELECT
    USING (space_id = ANY ((SELECT array_agg(m.space_id) FROM trove_sync.members m
                            WHERE m.role_name = current_user)::bigint[]));
DROP POLICY IF EXISTS changes_written ON trove_sync.changes;
CREATE POLICY changes_written ON trove_sync.changes FOR INSERT
    WITH CHECK (space_id = ANY ((SELECT array_agg(m.space_id) FROM trove_sync.members m
                                 WHERE m.role_name = current_user)::bigint[]));
-- A space's owner may delete change sets of the space (one that no device can open: see
-- delete_change_set); nobody else may.
DROP POLICY IF EXISTS changes_deleted ON trove_sync.changes;
CREATE POLICY changes_deleted ON trove_sync.changes FOR DELETE
    USING (space_id IN (SELECT s.id FROM trove_sync.spaces s WHERE s.owner = current_user));
-- Any member may prune: delete change sets at or below the space's pruned_up_to, which a
-- trigger (guard_pruned_up_to) lets grow only up to the prune bound (covered by the newest
-- snapshot and pulled by every device seen within the horizon). One primary-key probe per row,
-- not the bound's aggregates: a first prune of a long feed deletes millions of rows.
DROP POLICY IF EXISTS changes_pruned ON trove_sync.changes;
CREATE POLICY changes_pruned ON trove_sync.changes FOR DELETE
    USING (space_id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user)
        AND server_sequence <= (SELECT s.pruned_up_to FROM trove_sync.spaces s WHERE s.id = space_id));

-- Devices may read, append, count and set a missing key check; nothing may update a change set,
-- and only a space's owner may delete one (the policy above).
REVOKE ALL ON ALL TABLES IN SCHEMA trove_sync FROM PUBLIC;
GRANT SELECT, INSERT ON trove_sync.spaces TO trove_sync_device;
GRANT UPDATE (last_sequence, key_check, pruned_up_to, key_epoch) ON trove_sync.spaces TO trove_sync_device;
GRANT SELECT, INSERT ON trove_sync.devices, trove_sync.wrapped_keys TO trove_sync_device;
GRANT UPDATE (removed_in, role_name) ON trove_sync.devices TO trove_sync_device;
GRANT UPDATE (wrapped_by, payload) ON trove_sync.wrapped_keys TO trove_sync_device;
GRANT SELECT, INSERT ON trove_sync.members TO trove_sync_device;
GRANT SELECT, INSERT, DELETE ON trove_sync.changes TO trove_sync_device;
GRANT SELECT, INSERT, UPDATE, DELETE ON trove_sync.snapshots, trove_sync.snapshot_parts, trove_sync.cursors
    TO trove_sync_device;
GRANT SELECT ON trove_sync.settings TO trove_sync_device;

-- A key check, once set, is changed only by the space's owner (reset_key_check): a member with
-- a wrong key must not replace it, even with SQL of its own.
CREATE OR REPLACE FUNCTION trove_sync.guard_key_check() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF OLD.key_check IS NOT NULL AND NEW.key_check IS DISTINCT FROM OLD.key_check
       AND OLD.owner <> current_user THEN
        RAISE EXCEPTION 'only the owner of space "%" may change its key check', OLD.name
            USING ERRCODE = 'TS003';
    END IF;
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER key_check_guarded BEFORE UPDATE OF key_check ON trove_sync.spaces
    FOR EACH ROW EXECUTE FUNCTION trove_sync.guard_key_check();

-- pruned_up_to never goes back, and never past the prune bound: a member cannot delete change
-- sets that a live device still needs or that no snapshot covers, even with SQL of its own.
CREATE OR REPLACE FUNCTION trove_sync.guard_pruned_up_to() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.pruned_up_to < OLD.pruned_up_to
       OR (NEW.pruned_up_to > OLD.pruned_up_to AND NEW.pruned_up_to > trove_sync.prune_bound(NEW.id)) THEN
        RAISE EXCEPTION 'space "%" may be pruned up to %, not %', OLD.name, trove_sync.prune_bound(NEW.id),
            NEW.pruned_up_to USING ERRCODE = 'TS005';
    END IF;
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER pruned_up_to_guarded BEFORE UPDATE OF pruned_up_to ON trove_sync.spaces
    FOR EACH ROW EXECUTE FUNCTION trove_sync.guard_pruned_up_to();

-- The version of this schema; a later Trove migrates from it. 2: key checks and deleting
-- change sets. 3: snapshots, cursors, pruning, pulls with a byte budget. 4: devices with keys
-- of their own, key epochs, removing devices.
CREATE OR REPLACE FUNCTION trove_sync.schema_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 4 $$;

-- The id of a space the caller may use. TS001 when there is none (unknown, or not a member:
-- the same error, so a name's existence does not leak through it).
CREATE OR REPLACE FUNCTION trove_sync.space_id(space_name text) RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    found_id bigint;
BEGIN
    SELECT s.id INTO found_id FROM trove_sync.spaces s
    WHERE s.name = space_name
      AND s.id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user);
    IF found_id IS NULL THEN
        RAISE EXCEPTION 'no space named "%" that role % is a member of', space_name, current_user
            USING ERRCODE = 'TS001';
    END IF;
    RETURN found_id;
END
$$;

-- Creates a space owned by the caller, who becomes its first member. Returns false when the
-- caller is already a member of a space with that name; TS002 when another role's space has it.
CREATE OR REPLACE FUNCTION trove_sync.create_space(space_name text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    new_id bigint;
BEGIN
    INSERT INTO trove_sync.spaces (name) VALUES (space_name)
    ON CONFLICT (name) DO NOTHING
    RETURNING id INTO new_id;
    IF new_id IS NULL THEN
        IF EXISTS (SELECT FROM trove_sync.spaces s
                   WHERE s.name = space_name
                     AND s.id IN (SELECT m.space_id FROM trove_sync.members m
                                  WHERE m.role_name = current_user)) THEN
            RETURN false;
        END IF;
        RAISE EXCEPTION 'the space name "%" is taken', space_name USING ERRCODE = 'TS002';
    END IF;
    INSERT INTO trove_sync.members (space_id, role_name) VALUES (new_id, current_user);
    RETURN true;
END
$$;

-- Lets another role (a device or a person) read and write a space. Only the space's owner may.
CREATE OR REPLACE FUNCTION trove_sync.add_member(space_name text, member name) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    owned_id bigint;
BEGIN
    SELECT s.id INTO owned_id FROM trove_sync.spaces s
    WHERE s.name = space_name AND s.owner = current_user;
    IF owned_id IS NULL THEN
        RAISE EXCEPTION 'role % owns no space named "%"', current_user, space_name
            USING ERRCODE = 'TS003';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = member) THEN
        RAISE EXCEPTION 'no role named %', member USING ERRCODE = 'TS004';
    END IF;
    INSERT INTO trove_sync.members (space_id, role_name) VALUES (owned_id, member)
    ON CONFLICT DO NOTHING;
END
$$;

-- Appends sealed change sets to a space's feed, in one transaction, and returns each one's server
-- sequence in the order given. A change set already stored (same device and device sequence,
-- e.g. a retry after a lost acknowledgement) is not stored again: its existing sequence is
-- returned. It does not notify: see announce below.
--
-- Cost, whatever the feed's length: the usual push is one insert, the unique key its check;
-- the general path (a retry, a repeat) probes the (space, device, device_sequence) index once
-- per change set. Two ways that probe could grow with the feed instead, both seen at 1,000
-- change sets per push: written as a join (NOT EXISTS, or a join for the returned sequences) the planner
-- hashes the whole space's feed once a batch is large; and a plan made for the actual space id
-- (plpgsql's first five calls per session) of a space the statistics do not know yet probes
-- through the primary key, reading the whole space per change set. Hence a scalar subquery and
-- generic plans, which never take the (space, server_sequence) key for this probe.
CREATE OR REPLACE FUNCTION trove_sync.push(
    space_name text, devices text[], device_sequences bigint[], payloads bytea[])
RETURNS TABLE (server_sequence bigint)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    space_key bigint;
    previous_last bigint;
    current_epoch bigint;
    added bigint;
    sequences bigint[];
BEGIN
    IF cardinality(devices) IS DISTINCT FROM cardinality(device_sequences)
       OR cardinality(devices) IS DISTINCT FROM cardinality(payloads) THEN
        RAISE EXCEPTION 'push needs as many sequences and payloads as devices'
            USING ERRCODE = '22023';
    END IF;
    space_key := trove_sync.space_id(space_name);
    -- A removed device is refused whatever it sends (its keys open nothing written after).
    IF EXISTS (SELECT FROM trove_sync.devices d
               WHERE d.space_id = space_key AND d.device = ANY (devices) AND d.removed_in IS NOT NULL) THEN
        RAISE EXCEPTION 'a device removed from space "%" may not push to it', space_name
            USING ERRCODE = 'TS006';
    END IF;
    -- The lock that orders this space's pushes (held until commit): the probes below see every
    -- push committed before it.
    SELECT s.last_sequence, s.key_epoch INTO previous_last, current_epoch FROM trove_sync.spaces s
    WHERE s.id = space_key FOR UPDATE;
    -- Sealed under an older key epoch than the space's (under the lock start_epoch takes too):
    -- refused, so a removed device cannot write under a key it kept; a member seals again.
    IF current_epoch > 0 AND EXISTS (
        SELECT FROM unnest(payloads) AS p (payload)
        WHERE trove_sync.payload_epoch(p.payload) < current_epoch) THEN
        RAISE EXCEPTION 'space "%" is at key epoch %: change sets sealed under an older one are refused',
            space_name, current_epoch USING ERRCODE = 'TS009';
    END IF;

    -- The usual push: every change set new and distinct, numbered in the order given by one
    -- insert. A change set stored already (a retry) or repeated within the batch violates the
    -- (space, device, device_sequence) key, which undoes this insert alone; the general path
    -- below then numbers the batch. The key's own check is the probe: no separate one. The
    -- counter is updated outside the block: a space row locked by the transaction and updated
    -- by a subtransaction would need a multixact, which every waiting push then resolves.
    BEGIN
        INSERT INTO trove_sync.changes (space_id, server_sequence, device, device_sequence, payload)
        SELECT space_key, previous_last + i.position, i.device, i.device_sequence, i.payload
        FROM unnest(devices, device_sequences, payloads) WITH ORDINALITY
            AS i (device, device_sequence, payload, position);
        added := cardinality(devices);
    EXCEPTION WHEN unique_violation THEN
        added := NULL;
    END;
    IF added IS NOT NULL THEN
        IF added > 0 THEN
            UPDATE trove_sync.spaces SET last_sequence = previous_last + added WHERE id = space_key;
        END IF;
        RETURN QUERY SELECT previous_last + g FROM generate_series(1::bigint, added) g;
        RETURN;
    END IF;

    -- Sorts and window functions only, no join: the payloads stay in their array until the
    -- insert reads them by position, and a change set repeated within the batch gets the number
    -- of its first occurrence.
    WITH given AS MATERIALIZED (
        SELECT i.device, i.device_sequence, i.position,
               (SELECT c.server_sequence FROM trove_sync.changes c
                WHERE c.space_id = space_key AND c.device = i.device
                  AND c.device_sequence = i.device_sequence) AS stored,
               -- Byte order: equality is all the partition needs, and a locale's order is slower.
               min(i.position) OVER (PARTITION BY i.device COLLATE "C", i.device_sequence) AS first_position
        FROM unnest(devices, device_sequences) WITH ORDINALITY AS i (device, device_sequence, position)
    ), numbered AS MATERIALIZED (
        SELECT g.device, g.device_sequence, g.position, g.stored, g.first_position,
               CASE WHEN g.stored IS NULL THEN
                   previous_last + dense_rank() OVER (PARTITION BY g.stored IS NULL ORDER BY g.first_position)
               END AS assigned
        FROM given g
    ), inserted AS (
        INSERT INTO trove_sync.changes (space_id, server_sequence, device, device_sequence, payload)
        SELECT space_key, n.assigned, n.device, n.device_sequence, payloads[n.position]
        FROM numbered n
        WHERE n.stored IS NULL AND n.position = n.first_position
        RETURNING 1
    )
    SELECT array_agg(coalesce(n.stored, n.assigned) ORDER BY n.position), (SELECT count(*) FROM inserted)
    INTO sequences, added
    FROM numbered n;

    IF added > 0 THEN
        UPDATE trove_sync.spaces SET last_sequence = previous_last + added WHERE id = space_key;
    END IF;

    RETURN QUERY SELECT unnest(sequences);
END
$$;

-- Notifies channel trove_sync_<space id> (payload: the space's last sequence) that the space has
-- new change sets; a device calls it after its push committed, in a transaction of its own.
-- Not inside push: a notifying transaction holds a database-wide lock from its commit until its
-- commit record is flushed, so a NOTIFY in push would make every push of every space wait for
-- every other push's flush (measured with 100 devices: 2.3 times fewer change sets per second).
-- This transaction writes nothing else, so its commit does not wait for a flush.
CREATE OR REPLACE FUNCTION trove_sync.announce(space_name text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    space_key bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    PERFORM pg_notify('trove_sync_' || space_key,
                      (SELECT s.last_sequence FROM trove_sync.spaces s WHERE s.id = space_key)::text);
END
$$;

-- The space's change sets after a server sequence, ascending, at most max_count of them.
-- The two pulls are plain SQL without a SET clause, so PostgreSQL inlines them into the calling
-- statement (which PostgresTransport prepares once per connection): a plpgsql function would
-- copy every row it returns into a result store first, which cost more than the scan itself.
-- Running as the caller, with no search_path of its own, is safe: every name is qualified, and
-- a caller's search_path can only change what its own call does.
-- The cursor is compared through a sub-select so that the plan made for a statement's values
-- and its generic plan estimate the same rows: otherwise the generic plan (a third of the feed
-- after an unknown cursor) looks dearer than one for a known cursor near the end, and
-- PostgreSQL plans every call again (inlining and parsing the function each time) instead of
-- reusing the plan. The plans are the same walk of the primary key; the transport writes the
-- count into its statement for the same reason. A reused plan locks its tables before it runs,
-- in the order it names them: spaces come first, as in a push and a re-install (above), or a
-- pull holding the feed would deadlock with a re-install holding spaces. The space's row is read
-- once per pull (the outer side of the lateral join): a busy space's row is updated by every
-- push, and reading it once per change set walked its chain of versions each time.
CREATE OR REPLACE FUNCTION trove_sync.pull(space_name text, after_sequence bigint, max_count integer)
RETURNS TABLE (server_sequence bigint, device text, device_sequence bigint, payload bytea)
LANGUAGE sql STABLE SECURITY INVOKER AS $$
    SELECT p.server_sequence, p.device, p.device_sequence, p.payload
    FROM trove_sync.spaces s, LATERAL (
        SELECT c.server_sequence, c.device, c.device_sequence, c.payload
        FROM trove_sync.changes c
        WHERE c.space_id = s.id AND c.server_sequence > (SELECT after_sequence)
        ORDER BY c.server_sequence
        LIMIT greatest(max_count, 0)) p
    WHERE s.id = (SELECT trove_sync.space_id(space_name))
    ORDER BY p.server_sequence
$$;

-- The same with a byte budget as well: change sets in order while their sizes add up to at most
-- max_bytes; the first one comes whatever its size (alone when it is over the budget).
CREATE OR REPLACE FUNCTION trove_sync.pull(
    space_name text, after_sequence bigint, max_count integer, max_bytes bigint)
RETURNS TABLE (server_sequence bigint, device text, device_sequence bigint, payload bytea)
LANGUAGE sql STABLE SECURITY INVOKER AS $$
    SELECT p.server_sequence, p.device, p.device_sequence, p.payload
    FROM trove_sync.spaces s, LATERAL (
        SELECT c.server_sequence, c.device, c.device_sequence, c.payload,
               sum(c.size) OVER running_total AS running, row_number() OVER running_total AS position
        FROM trove_sync.changes c
        WHERE c.space_id = s.id AND c.server_sequence > (SELECT after_sequence)
        WINDOW running_total AS (ORDER BY c.server_sequence ROWS UNBOUNDED PRECEDING)
        ORDER BY c.server_sequence
        LIMIT greatest(max_count, 0)) p
    WHERE s.id = (SELECT trove_sync.space_id(space_name)) AND (p.position = 1 OR p.running <= max_bytes)
    ORDER BY p.server_sequence
$$;

-- The space's last server sequence (0 for an empty feed): how far behind a device is.
CREATE OR REPLACE FUNCTION trove_sync.last_sequence(space_name text) RETURNS bigint
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.last_sequence FROM trove_sync.spaces s WHERE s.id = trove_sync.space_id(space_name)
$$;

-- The LISTEN channel on which pushes to the space are announced.
CREATE OR REPLACE FUNCTION trove_sync.channel(space_name text) RETURNS text
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
    SELECT 'trove_sync_' || trove_sync.space_id(space_name)
$$;

-- The space's key check (NULL until a device set one): a device opens it with its key before
-- it pushes or pulls.
CREATE OR REPLACE FUNCTION trove_sync.key_check(space_name text) RETURNS bytea
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.key_check FROM trove_sync.spaces s WHERE s.id = trove_sync.space_id(space_name)
$$;

-- Sets the space's key check if it has none, and returns the one it keeps: the first device's
-- wins, and a device that raced with another key learns it at once.
CREATE OR REPLACE FUNCTION trove_sync.set_key_check(space_name text, check_value bytea) RETURNS bytea
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    space_key bigint;
    kept bytea;
BEGIN
    space_key := trove_sync.space_id(space_name);
    -- A concurrent setter holds the row: this update waits, then finds the check set and
    -- changes nothing; the select (a new snapshot) returns the winner's.
    UPDATE trove_sync.spaces s SET key_check = check_value WHERE s.id = space_key AND s.key_check IS NULL;
    SELECT s.key_check INTO kept FROM trove_sync.spaces s WHERE s.id = space_key;
    RETURN kept;
END
$$;

-- Forgets the space's key check, so the next device that syncs sets it again. Only the owner
-- may (TS003): for a space whose first device had a wrong key (see Documentation/SYNC.md).
CREATE OR REPLACE FUNCTION trove_sync.reset_key_check(space_name text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE trove_sync.spaces s SET key_check = NULL WHERE s.name = space_name AND s.owner = current_user;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'role % owns no space named "%"', current_user, space_name USING ERRCODE = 'TS003';
    END IF;
END
$$;

-- Deletes one change set from the space's feed: one that does not open for any device (its
-- bytes altered, or sealed with a key no member has), which devices keep in quarantine. Only
-- the space's owner may (TS003). Returns false when there was no such change set. The feed's
-- other sequences do not move; devices past it are not affected, later ones never see it.
CREATE OR REPLACE FUNCTION trove_sync.delete_change_set(space_name text, sender text, sender_sequence bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    owned_id bigint;
BEGIN
    SELECT s.id INTO owned_id FROM trove_sync.spaces s
    WHERE s.name = space_name AND s.owner = current_user;
    IF owned_id IS NULL THEN
        RAISE EXCEPTION 'role % owns no space named "%"', current_user, space_name
            USING ERRCODE = 'TS003';
    END IF;
    DELETE FROM trove_sync.changes c
    WHERE c.space_id = owned_id AND c.device = sender AND c.device_sequence = sender_sequence;
    RETURN FOUND;
END
$$;

-- Stores one sealed part of a snapshot (the snapshot's row made by the first part). A part sent
-- again replaces itself: an upload cut off midway is simply sent again, in as many parts as it
-- now takes (parts beyond them go). A complete snapshot is kept whole: the same device's state at
-- the same sequence is what it holds already, and a device may be reading its parts.
CREATE OR REPLACE FUNCTION trove_sync.put_snapshot_part(
    space_name text, up_to bigint, sender text, part_index integer, part_count integer, part_payload bytea)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    space_key bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    IF part_index < 0 OR part_index >= part_count THEN
        RAISE EXCEPTION 'part % of a snapshot of % parts', part_index, part_count USING ERRCODE = '22023';
    END IF;
    IF trove_sync.payload_epoch(part_payload)
       < (SELECT s.key_epoch FROM trove_sync.spaces s WHERE s.id = space_key) THEN
        RAISE EXCEPTION 'space "%" is at a newer key epoch: a snapshot sealed under an older one is refused',
            space_name USING ERRCODE = 'TS009';
    END IF;
    IF EXISTS (SELECT 1 FROM trove_sync.snapshots s
               WHERE s.space_id = space_key AND s.up_to_sequence = up_to AND s.device = sender
                 AND s.complete) THEN
        RETURN;
    END IF;
    INSERT INTO trove_sync.snapshots (space_id, up_to_sequence, device, parts)
    VALUES (space_key, up_to, sender, part_count)
    ON CONFLICT (space_id, up_to_sequence, device) DO UPDATE SET parts = excluded.parts;
    DELETE FROM trove_sync.snapshot_parts p
    WHERE p.space_id = space_key AND p.up_to_sequence = up_to AND p.device = sender
      AND p.part >= part_count;
    INSERT INTO trove_sync.snapshot_parts (space_id, up_to_sequence, device, part, payload)
    VALUES (space_key, up_to, sender, part_index, part_payload)
    ON CONFLICT (space_id, up_to_sequence, device, part) DO UPDATE SET payload = excluded.payload;
END
$$;

-- Marks a snapshot complete once all its parts are stored (false otherwise), and deletes the
-- snapshots it replaces (older ones, and unfinished ones a day old).
CREATE OR REPLACE FUNCTION trove_sync.finish_snapshot(space_name text, up_to bigint, sender text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    space_key bigint;
    stored integer;
    expected integer;
    total bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    SELECT s.parts INTO expected FROM trove_sync.snapshots s
    WHERE s.space_id = space_key AND s.up_to_sequence = up_to AND s.device = sender;
    SELECT count(*), coalesce(sum(octet_length(p.payload)), 0) INTO stored, total FROM trove_sync.snapshot_parts p
    WHERE p.space_id = space_key AND p.up_to_sequence = up_to AND p.device = sender;
    IF expected IS NULL OR stored <> expected THEN
        RETURN false;
    END IF;
    UPDATE trove_sync.snapshots s SET complete = true, size = total, created_at = now()
    WHERE s.space_id = space_key AND s.up_to_sequence = up_to AND s.device = sender;
    DELETE FROM trove_sync.snapshots s
    WHERE s.space_id = space_key
      AND ((s.complete AND (s.up_to_sequence, s.device) < (up_to, sender))
           OR (NOT s.complete AND s.created_at < now() - interval '1 day'));
    RETURN true;
END
$$;

-- The space's newest complete snapshot (no row when it has none).
CREATE OR REPLACE FUNCTION trove_sync.newest_snapshot(space_name text)
RETURNS TABLE (up_to_sequence bigint, device text, parts integer, size bigint)
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.up_to_sequence, s.device, s.parts, s.size FROM trove_sync.snapshots s
    WHERE s.space_id = trove_sync.space_id(space_name) AND s.complete
    ORDER BY s.up_to_sequence DESC, s.device DESC LIMIT 1
$$;

-- One sealed part of a snapshot (NULL when it is gone: a newer snapshot replaced it).
CREATE OR REPLACE FUNCTION trove_sync.snapshot_part(space_name text, up_to bigint, sender text, part_index integer)
RETURNS bytea
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
    SELECT p.payload FROM trove_sync.snapshot_parts p
    WHERE p.space_id = trove_sync.space_id(space_name) AND p.up_to_sequence = up_to
      AND p.device = sender AND p.part = part_index
$$;

-- A device says how far it has pulled (and that it is alive); then the feed is pruned at or
-- below the prune bound. Returns how many change sets were pruned.
CREATE OR REPLACE FUNCTION trove_sync.report_cursor(space_name text, sender text, pulled bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    space_key bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    INSERT INTO trove_sync.cursors (space_id, device, pulled_up_to, seen_at)
    VALUES (space_key, sender, pulled, now())
    ON CONFLICT (space_id, device) DO UPDATE
        SET pulled_up_to = greatest(trove_sync.cursors.pulled_up_to, excluded.pulled_up_to), seen_at = now();
    RETURN trove_sync.prune(space_name);
END
$$;

-- Deletes the change sets at or below the prune bound and records how far the feed was pruned.
-- Returns how many were deleted.
CREATE OR REPLACE FUNCTION trove_sync.prune(space_name text) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    space_key bigint;
    bound bigint;
    deleted bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    bound := trove_sync.prune_bound(space_key);
    IF bound <= (SELECT s.pruned_up_to FROM trove_sync.spaces s WHERE s.id = space_key) THEN
        RETURN 0;
    END IF;
    -- First the mark (the row lock orders this with pushes and other prunes), then the rows the
    -- policy now lets go.
    UPDATE trove_sync.spaces s SET pruned_up_to = bound WHERE s.id = space_key AND s.pruned_up_to < bound;
    DELETE FROM trove_sync.changes c WHERE c.space_id = space_key AND c.server_sequence <= bound;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    RETURN deleted;
END
$$;

-- What a device needs to decide between the feed and a snapshot, and to show the feed's state:
-- the last sequence, how far the feed was pruned, the newest snapshot, the horizon, and the
-- change sets and bytes after the snapshot (a range scan of the feed's tail). With full, also
-- the whole feed's count and bytes (a scan of the space's feed).
CREATE OR REPLACE FUNCTION trove_sync.feed_state(space_name text, full_size boolean)
RETURNS TABLE (last_sequence bigint, pruned_up_to bigint, snapshot_up_to bigint, snapshot_size bigint,
               horizon_seconds double precision, tail_count bigint, tail_bytes bigint,
               feed_count bigint, feed_bytes bigint)
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    space_key bigint;
    snap_up_to bigint;
    snap_size bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    SELECT s.up_to_sequence, s.size INTO snap_up_to, snap_size FROM trove_sync.snapshots s
    WHERE s.space_id = space_key AND s.complete ORDER BY s.up_to_sequence DESC LIMIT 1;
    RETURN QUERY
    SELECT sp.last_sequence, sp.pruned_up_to, snap_up_to, snap_size,
           extract(epoch FROM (SELECT t.prune_horizon FROM trove_sync.settings t))::double precision,
           (SELECT count(*) FROM trove_sync.changes c
            WHERE c.space_id = space_key AND c.server_sequence > coalesce(snap_up_to, 0)),
           (SELECT coalesce(sum(c.size), 0)::bigint FROM trove_sync.changes c
            WHERE c.space_id = space_key AND c.server_sequence > coalesce(snap_up_to, 0)),
           CASE WHEN full_size THEN (SELECT count(*) FROM trove_sync.changes c WHERE c.space_id = space_key) END,
           CASE WHEN full_size THEN (SELECT coalesce(sum(c.size), 0)::bigint FROM trove_sync.changes c
                                     WHERE c.space_id = space_key) END
    FROM trove_sync.spaces sp WHERE sp.id = space_key;
END
$$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA trove_sync FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA trove_sync TO trove_sync_device;

-- The space's current key epoch (0 until a device is first removed).
CREATE OR REPLACE FUNCTION trove_sync.key_epoch(space_name text) RETURNS bigint
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
    SELECT s.key_epoch FROM trove_sync.spaces s WHERE s.id = trove_sync.space_id(space_name)
$$;

-- The space's devices, removed ones included, in the order they were added.
CREATE OR REPLACE FUNCTION trove_sync.devices(space_name text)
RETURNS TABLE (device text, public_key bytea, certificate bytea, removed_in bigint, role_name name)
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    space_key bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    RETURN QUERY
    SELECT d.device, d.public_key, d.certificate, d.removed_in, d.role_name
    FROM trove_sync.devices d WHERE d.space_id = space_key
    ORDER BY d.added_at, d.device;
END
$$;

-- The keys wrapped for one device, by epoch.
CREATE OR REPLACE FUNCTION trove_sync.wrapped_keys(space_name text, recipient text)
RETURNS TABLE (epoch bigint, wrapped_by text, payload bytea)
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    space_key bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    RETURN QUERY
    SELECT w.epoch, w.wrapped_by, w.payload FROM trove_sync.wrapped_keys w
    WHERE w.space_id = space_key AND w.device = recipient
    ORDER BY w.epoch;
END
$$;

-- Registers a device (kept as it is when registered already, but for its role; TS008 when
-- registered with another public key) and stores keys wrapped for it (replacing earlier ones: a device added again gets
-- a new confirmation code).
CREATE OR REPLACE FUNCTION trove_sync.put_device(
    space_name text, new_device text, new_public_key bytea, new_certificate bytea,
    epochs bigint[], wrappers text[], payloads bytea[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    space_key bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    -- A device registering itself (no keys given) records its own role; one a member added
    -- carries the member's until then.
    INSERT INTO trove_sync.devices AS d (space_id, device, public_key, certificate)
    VALUES (space_key, new_device, new_public_key, new_certificate)
    ON CONFLICT (space_id, device) DO UPDATE SET role_name = current_user
        WHERE cardinality(epochs) = 0 AND d.public_key = excluded.public_key
          AND d.role_name <> current_user;
    IF EXISTS (SELECT FROM trove_sync.devices d
               WHERE d.space_id = space_key AND d.device = new_device
                 AND d.public_key <> new_public_key) THEN
        RAISE EXCEPTION 'device % of space "%" has another public key', new_device, space_name
            USING ERRCODE = 'TS008';
    END IF;
    INSERT INTO trove_sync.wrapped_keys (space_id, epoch, device, wrapped_by, payload)
    SELECT space_key, u.epoch, new_device, u.wrapped_by, u.payload
    FROM unnest(epochs, wrappers, payloads) AS u (epoch, wrapped_by, payload)
    ON CONFLICT (space_id, epoch, device)
        DO UPDATE SET wrapped_by = excluded.wrapped_by, payload = excluded.payload;
END
$$;

-- Starts the space's next key epoch, atomically: the devices in removing are removed in it and
-- its key, wrapped for the remaining devices, is stored. TS007 when new_epoch is not the current
-- one plus one (another device started it first). Locks the space row, as push does, so no push
-- interleaves with it.
CREATE OR REPLACE FUNCTION trove_sync.start_epoch(
    space_name text, new_epoch bigint, removing text[], recipients text[], wrappers text[],
    payloads bytea[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    space_key bigint;
    current_epoch bigint;
BEGIN
    space_key := trove_sync.space_id(space_name);
    SELECT s.key_epoch INTO current_epoch FROM trove_sync.spaces s WHERE s.id = space_key FOR UPDATE;
    IF new_epoch IS DISTINCT FROM current_epoch + 1 THEN
        RAISE EXCEPTION 'space "%" is at key epoch %, so the next is %, not %', space_name,
            current_epoch, current_epoch + 1, new_epoch USING ERRCODE = 'TS007';
    END IF;
    UPDATE trove_sync.devices d SET removed_in = new_epoch
    WHERE d.space_id = space_key AND d.device = ANY (removing) AND d.removed_in IS NULL;
    INSERT INTO trove_sync.wrapped_keys (space_id, epoch, device, wrapped_by, payload)
    SELECT space_key, new_epoch, u.device, u.wrapped_by, u.payload
    FROM unnest(recipients, wrappers, payloads) AS u (device, wrapped_by, payload);
    UPDATE trove_sync.spaces SET key_epoch = new_epoch WHERE id = space_key;
END
$$;

COMMIT;
