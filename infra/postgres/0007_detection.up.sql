-- Detection (pipelines/detect): rulesets, alerts with their append-only evidence, episodes and
-- their case history, party posture, feed coverage, the latest evaluation of each subject, and
-- the outgoing events (webhook envelopes) enqueued in the same transaction as the state change
-- that causes them. Service-issued ids are uuids, rendered with their prefix (alrt_, epsd_, whe_).

-- Versioned detector configurations per tenant. state: candidate, shadow, active, retired
-- (replaced by a newer active one) or rolled_back. At most one active and one shadow per tenant;
-- a tenant without an active ruleset runs the built-in default (version 0).
CREATE TABLE rulesets (
  tenant_id     text NOT NULL,
  version       integer NOT NULL CHECK (version > 0),
  name          text NOT NULL,
  document      jsonb NOT NULL,
  state         text NOT NULL CHECK (state IN ('candidate', 'shadow', 'active', 'retired', 'rolled_back')),
  created_at    timestamptz NOT NULL,
  activated_at  timestamptz,
  backtest      jsonb,
  PRIMARY KEY (tenant_id, version)
);
CREATE UNIQUE INDEX rulesets_one_active ON rulesets (tenant_id) WHERE state = 'active';
CREATE UNIQUE INDEX rulesets_one_shadow ON rulesets (tenant_id) WHERE state = 'shadow';

-- One alert per detector, subject and overlapping event-time window: new evidence extends the
-- window and raises the score, and is appended to alert_evidence (evidence is never edited).
-- mode 'shadow' alerts come from a ruleset in shadow: recorded, never published.
CREATE TABLE alerts (
  tenant_id         text NOT NULL,
  alert_id          uuid NOT NULL,
  mode              text NOT NULL CHECK (mode IN ('live', 'shadow')),
  ruleset_version   integer NOT NULL,
  detector_id       text NOT NULL,
  detector_version  integer NOT NULL,
  typology          text NOT NULL,
  subject_kind      text NOT NULL,
  subject_id        text NOT NULL,
  party_id          text,
  window_from       timestamptz NOT NULL,
  window_to         timestamptz NOT NULL,
  score             double precision NOT NULL,
  severity          text NOT NULL,
  status            text NOT NULL CHECK (status IN ('open', 'closed')),
  summary           text NOT NULL,
  explanation       text NOT NULL,
  hits              integer NOT NULL,
  episode_id        uuid,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, alert_id)
);
CREATE INDEX alerts_subject ON alerts (tenant_id, mode, detector_id, subject_kind, subject_id, window_to);
CREATE INDEX alerts_party ON alerts (tenant_id, party_id) WHERE mode = 'live';
CREATE INDEX alerts_listing ON alerts (tenant_id, mode, created_at DESC, alert_id DESC);

CREATE TABLE alert_evidence (
  tenant_id    text NOT NULL,
  alert_id     uuid NOT NULL,
  seq          integer NOT NULL,
  recorded_at  timestamptz NOT NULL,
  event_at     timestamptz NOT NULL,
  score        double precision NOT NULL,
  severity     text NOT NULL,
  evidence     jsonb NOT NULL,
  PRIMARY KEY (tenant_id, alert_id, seq)
);

-- Alerts on one subject, and on subjects connected within k hops, grouped within a time horizon.
-- status: open, escalated, resolved, reopened. Times of alerts are event time.
CREATE TABLE episodes (
  tenant_id      text NOT NULL,
  episode_id     uuid NOT NULL,
  status         text NOT NULL CHECK (status IN ('open', 'escalated', 'resolved', 'reopened')),
  severity       text NOT NULL,
  first_alert_at timestamptz NOT NULL,
  last_alert_at  timestamptz NOT NULL,
  alert_count    integer NOT NULL,
  case_status    text NOT NULL,
  disposition    text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, episode_id)
);
CREATE INDEX episodes_listing ON episodes (tenant_id, updated_at DESC, episode_id DESC);

-- The subjects of an episode: the subjects of its alerts (role subject) and the counterparties
-- their evidence names (role counterparty).
CREATE TABLE episode_members (
  tenant_id     text NOT NULL,
  episode_id    uuid NOT NULL,
  subject_kind  text NOT NULL,
  subject_id    text NOT NULL,
  role          text NOT NULL CHECK (role IN ('subject', 'counterparty')),
  added_at      timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, episode_id, subject_kind, subject_id)
);
CREATE INDEX episode_members_subject ON episode_members (tenant_id, subject_kind, subject_id);

-- Every case action, append-only: who set which status or disposition, when, and why.
CREATE TABLE case_actions (
  tenant_id     text NOT NULL,
  episode_id    uuid NOT NULL,
  seq           integer NOT NULL,
  at            timestamptz NOT NULL,
  actor         text NOT NULL,
  case_status   text NOT NULL,
  disposition   text,
  note          text,
  PRIMARY KEY (tenant_id, episode_id, seq)
);

-- The banded posture of each party that detection has looked at (unknown parties have no row).
CREATE TABLE party_postures (
  tenant_id     text NOT NULL,
  party_id      text NOT NULL,
  band          text NOT NULL CHECK (band IN ('low', 'medium', 'high', 'critical', 'incomplete')),
  computed_at   timestamptz NOT NULL,
  evaluated_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, party_id)
);

-- Which families arrive per tenant and how fresh they are. state: active or degraded (silent
-- for longer than the family's silence threshold).
CREATE TABLE feed_coverage (
  tenant_id          text NOT NULL,
  family             text NOT NULL,
  last_received_at   timestamptz NOT NULL,
  last_occurred_at   timestamptz NOT NULL,
  state              text NOT NULL CHECK (state IN ('active', 'degraded')),
  state_changed_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, family)
);

-- The latest evaluation of each subject per mode: the ruleset, the event time evaluated at and
-- every detector's outcome ({detector_id: outcome}), non-results included.
CREATE TABLE subject_evaluations (
  tenant_id        text NOT NULL,
  subject_kind     text NOT NULL,
  subject_id       text NOT NULL,
  mode             text NOT NULL CHECK (mode IN ('live', 'shadow')),
  ruleset_version  integer NOT NULL,
  event_at         timestamptz NOT NULL,
  evaluated_at     timestamptz NOT NULL,
  outcomes         jsonb NOT NULL,
  PRIMARY KEY (tenant_id, subject_kind, subject_id, mode)
);

-- Webhook envelopes waiting for the delivery worker. data is the event payload as delivered.
CREATE TABLE outgoing_events (
  tenant_id       text NOT NULL,
  envelope_id     uuid NOT NULL,
  type            text NOT NULL,
  classification  text NOT NULL,
  created_at      timestamptz NOT NULL,
  data            jsonb NOT NULL,
  PRIMARY KEY (envelope_id)
);
CREATE INDEX outgoing_events_tenant ON outgoing_events (tenant_id, created_at);
