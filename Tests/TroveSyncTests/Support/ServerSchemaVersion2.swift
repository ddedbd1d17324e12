// The server schema as Trove shipped it at version 2 (key checks), kept so that installing the
// current trove-sync.sql over it is tested: the upgrade must keep every space and feed.
enum ServerSchemaVersion2 {
    static let sql = #"""
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

        -- Row-level security. The table owner (the installing role) bypasses it; device roles do not.
        ALTER TABLE trove_sync.spaces ENABLE ROW LEVEL SECURITY;
        ALTER TABLE trove_sync.members ENABLE ROW LEVEL SECURITY;
        ALTER TABLE trove_sync.changes ENABLE ROW LEVEL SECURITY;

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

        DROP POLICY IF EXISTS changes_read ON trove_sync.changes;
        CREATE POLICY changes_read ON trove_sync.changes FOR SELECT
            USING (space_id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user));
        DROP POLICY IF EXISTS changes_written ON trove_sync.changes;
        CREATE POLICY changes_written ON trove_sync.changes FOR INSERT
            WITH CHECK (space_id IN (SELECT m.space_id FROM trove_sync.members m WHERE m.role_name = current_user));
        -- A space's owner may delete change sets of the space (one that no device can open: see
        -- delete_change_set); nobody else may.
        DROP POLICY IF EXISTS changes_deleted ON trove_sync.changes;
        CREATE POLICY changes_deleted ON trove_sync.changes FOR DELETE
            USING (space_id IN (SELECT s.id FROM trove_sync.spaces s WHERE s.owner = current_user));

        -- Devices may read, append, count and set a missing key check; nothing may update a change set,
        -- and only a space's owner may delete one (the policy above).
        REVOKE ALL ON ALL TABLES IN SCHEMA trove_sync FROM PUBLIC;
        GRANT SELECT, INSERT ON trove_sync.spaces TO trove_sync_device;
        GRANT UPDATE (last_sequence, key_check) ON trove_sync.spaces TO trove_sync_device;
        GRANT SELECT, INSERT ON trove_sync.members TO trove_sync_device;
        GRANT SELECT, INSERT, DELETE ON trove_sync.changes TO trove_sync_device;

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

        -- The version of this schema; a later Trove migrates from it. 2: key checks and deleting
        -- change sets.
        CREATE OR REPLACE FUNCTION trove_sync.schema_version() RETURNS integer
        LANGUAGE sql IMMUTABLE AS $$ SELECT 2 $$;

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
        -- Cost: one probe of the (space, device, device_sequence) index per change set, whatever the
        -- feed's length. Two ways it could grow with the feed instead, both seen at 1,000 change sets
        -- per push: written as a join (NOT EXISTS, or a join for the returned sequences) the planner
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
            added bigint;
            sequences bigint[];
        BEGIN
            IF cardinality(devices) IS DISTINCT FROM cardinality(device_sequences)
               OR cardinality(devices) IS DISTINCT FROM cardinality(payloads) THEN
                RAISE EXCEPTION 'push needs as many sequences and payloads as devices'
                    USING ERRCODE = '22023';
            END IF;
            space_key := trove_sync.space_id(space_name);
            -- The lock that orders this space's pushes (held until commit): the probes below see every
            -- push committed before it.
            SELECT s.last_sequence INTO previous_last FROM trove_sync.spaces s
            WHERE s.id = space_key FOR UPDATE;

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
        CREATE OR REPLACE FUNCTION trove_sync.pull(space_name text, after_sequence bigint, max_count integer)
        RETURNS TABLE (server_sequence bigint, device text, device_sequence bigint, payload bytea)
        LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp AS $$
        #variable_conflict use_column
        DECLARE
            space_key bigint;
        BEGIN
            space_key := trove_sync.space_id(space_name);
            RETURN QUERY
            SELECT c.server_sequence, c.device, c.device_sequence, c.payload
            FROM trove_sync.changes c
            WHERE c.space_id = space_key AND c.server_sequence > after_sequence
            ORDER BY c.server_sequence
            LIMIT greatest(max_count, 0);
        END
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

        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA trove_sync FROM PUBLIC;
        GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA trove_sync TO trove_sync_device;

        COMMIT;
        """#
}
