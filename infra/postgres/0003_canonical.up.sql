-- The embedded bus (the outbox read as a partitioned log by consumer groups), the canonical
-- model, held references, and FX rates.

-- An entity's events always land in the same partition, so one consumer handles them in order.
ALTER TABLE outbox
  ADD COLUMN partition smallint GENERATED ALWAYS AS ((hashtext(partition_key) & 2147483647) % 16) STORED;
CREATE INDEX outbox_log ON outbox (partition, writer_xid, position);

-- Per group and partition: the last record whose effects are durable.
CREATE TABLE consumer_offsets (
  group_name  text NOT NULL,
  partition   smallint NOT NULL,
  writer_xid  xid8 NOT NULL,
  position    bigint NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (group_name, partition)
);

-- Live consumers of each group, so partitions can be shared out fairly.
CREATE TABLE consumer_members (
  group_name  text NOT NULL,
  member_id   text NOT NULL,
  seen_at     timestamptz NOT NULL,
  PRIMARY KEY (group_name, member_id)
);

-- Every version of every entity (party, account, instrument, relationship), identifiers hashed.
CREATE TABLE canonical_entity_versions (
  tenant_id    text NOT NULL,
  object       text NOT NULL,
  external_id  text NOT NULL,
  sequence     bigint,
  event_id     uuid NOT NULL,
  occurred_at  timestamptz NOT NULL,
  received_at  timestamptz NOT NULL,
  data         jsonb NOT NULL,
  PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX canonical_entity_versions_identity ON canonical_entity_versions (tenant_id, object, external_id, sequence);

-- The current version of each entity: the highest sequence received so far.
CREATE TABLE canonical_entities (
  tenant_id    text NOT NULL,
  object       text NOT NULL,
  external_id  text NOT NULL,
  sequence     bigint,
  event_id     uuid NOT NULL,
  occurred_at  timestamptz NOT NULL,
  received_at  timestamptz NOT NULL,
  data         jsonb NOT NULL,
  PRIMARY KEY (tenant_id, object, external_id)
);

-- Movements: immutable facts. Amounts are integer minor units (numeric(38,0)), never floats.
-- debit_party_id / credit_party_id are resolved: the leg's party, else its account's holder.
CREATE TABLE canonical_movements (
  tenant_id          text NOT NULL,
  external_id        text NOT NULL,
  event_id           uuid NOT NULL,
  occurred_at        timestamptz NOT NULL,
  received_at        timestamptz NOT NULL,
  type               text NOT NULL,
  status             text NOT NULL,
  amount_value       numeric(38, 0) NOT NULL,
  amount_asset       text NOT NULL,
  amount_scale       smallint NOT NULL,
  debit_account_id   text,
  debit_party_id     text,
  credit_account_id  text,
  credit_party_id    text,
  normalized         jsonb,
  data               jsonb NOT NULL,
  PRIMARY KEY (tenant_id, external_id)
);
CREATE INDEX canonical_movements_debit_party ON canonical_movements (tenant_id, debit_party_id, occurred_at DESC, event_id DESC);
CREATE INDEX canonical_movements_credit_party ON canonical_movements (tenant_id, credit_party_id, occurred_at DESC, event_id DESC);

-- Links between facts (a correction, reversal, refund or settlement names its original).
CREATE TABLE canonical_movement_links (
  tenant_id    text NOT NULL,
  from_id      text NOT NULL,
  relation     text NOT NULL,
  to_id        text NOT NULL,
  PRIMARY KEY (tenant_id, to_id, relation, from_id)
);

CREATE TABLE canonical_control_events (
  tenant_id            text NOT NULL,
  external_id          text NOT NULL,
  event_id             uuid NOT NULL,
  occurred_at          timestamptz NOT NULL,
  received_at          timestamptz NOT NULL,
  type                 text NOT NULL,
  subject_kind         text NOT NULL,
  subject_external_id  text NOT NULL,
  data                 jsonb NOT NULL,
  PRIMARY KEY (tenant_id, external_id)
);
CREATE INDEX canonical_control_events_subject ON canonical_control_events (tenant_id, subject_kind, subject_external_id, occurred_at);

-- Events waiting for an entity they reference. held_since is the event's arrival; after 15
-- minutes it is quarantined (a referential exception), and still released when the entity comes.
CREATE TABLE held_events (
  tenant_id       text NOT NULL,
  event_id        uuid NOT NULL,
  held_since      timestamptz NOT NULL,
  quarantined_at  timestamptz,
  PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX held_events_pending ON held_events (held_since) WHERE quarantined_at IS NULL;

CREATE TABLE held_references (
  tenant_id    text NOT NULL,
  object       text NOT NULL,
  external_id  text NOT NULL,
  event_id     uuid NOT NULL,
  PRIMARY KEY (tenant_id, object, external_id, event_id)
);
CREATE INDEX held_references_event ON held_references (tenant_id, event_id);

-- FX rate files, loaded whole or not at all. 1 base = rate quote.
CREATE TABLE fx_rate_files (
  file_id    uuid PRIMARY KEY,
  name       text NOT NULL,
  sha256     bytea NOT NULL,
  row_count  integer NOT NULL,
  loaded_at  timestamptz NOT NULL
);

CREATE TABLE fx_rates (
  file_id     uuid NOT NULL REFERENCES fx_rate_files (file_id),
  base        text NOT NULL,
  quote       text NOT NULL,
  rate        text NOT NULL,
  rate_scale  smallint NOT NULL,
  valid_from  timestamptz NOT NULL,
  loaded_at   timestamptz NOT NULL
);
CREATE INDEX fx_rates_pair ON fx_rates (base, quote, valid_from DESC, loaded_at DESC);
