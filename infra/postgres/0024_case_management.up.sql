-- Case management in the console (services/console/routes/cases.ts, docs/decisions/0030 and
-- 0031): the tenant's case SLA, append-only case notes, four-eyes report proposals, and the case
-- inbox, a row per episode holding what the inbox filters and sorts on.

-- Hours from a case's opening to its due date, per priority. No row: the service's defaults
-- (pipelines/detect/case-inbox.ts, DEFAULT_CASE_SLA_HOURS).
CREATE TABLE case_sla (
  tenant_id   text PRIMARY KEY REFERENCES tenants (tenant_id),
  critical_h  integer NOT NULL CHECK (critical_h > 0),
  high_h      integer NOT NULL CHECK (high_h > 0),
  medium_h    integer NOT NULL CHECK (medium_h > 0),
  low_h       integer NOT NULL CHECK (low_h > 0),
  updated_at  timestamptz NOT NULL,
  updated_by  uuid NOT NULL REFERENCES console_users (user_id)
);

-- Free-form notes on a case: append-only (UPDATE, DELETE and TRUNCATE refused), each with its
-- author and time; every note is also in console_audit (case.note_added).
CREATE TABLE case_notes (
  tenant_id       text NOT NULL,
  note_id         uuid NOT NULL,
  episode_id      uuid NOT NULL,
  author_user_id  uuid NOT NULL REFERENCES console_users (user_id),
  body            text NOT NULL CHECK (length(body) BETWEEN 1 AND 10000),
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, note_id),
  CONSTRAINT case_notes_episode FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, episode_id)
);
CREATE INDEX case_notes_episode_at ON case_notes (tenant_id, episode_id, created_at, note_id);

CREATE FUNCTION case_notes_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'case_notes is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER case_notes_no_update_delete BEFORE UPDATE OR DELETE ON case_notes
  FOR EACH ROW EXECUTE FUNCTION case_notes_refuse_change();
CREATE TRIGGER case_notes_no_truncate BEFORE TRUNCATE ON case_notes
  FOR EACH STATEMENT EXECUTE FUNCTION case_notes_refuse_change();

-- Four-eyes reporting: a proposal to file a suspicious-activity report, decided once by a
-- supervisor other than the proposer. At most one pending proposal per case.
CREATE TABLE case_report_proposals (
  tenant_id        text NOT NULL,
  proposal_id      uuid NOT NULL,
  episode_id       uuid NOT NULL,
  state            text NOT NULL CONSTRAINT case_report_proposals_state CHECK (state IN ('pending', 'approved', 'rejected')),
  narrative        text NOT NULL,
  proposed_by      uuid NOT NULL REFERENCES console_users (user_id),
  proposed_at      timestamptz NOT NULL,
  decided_by       uuid REFERENCES console_users (user_id),
  decided_at       timestamptz,
  decision_reason  text,
  PRIMARY KEY (tenant_id, proposal_id),
  CONSTRAINT case_report_proposals_episode FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, episode_id),
  -- The second pair of eyes is another user.
  CONSTRAINT case_report_proposals_four_eyes CHECK (decided_by IS NULL OR decided_by <> proposed_by),
  CONSTRAINT case_report_proposals_decided CHECK ((state = 'pending') = (decided_at IS NULL))
);
CREATE UNIQUE INDEX case_report_proposals_one_pending ON case_report_proposals (tenant_id, episode_id) WHERE state = 'pending';
CREATE INDEX case_report_proposals_episode ON case_report_proposals (tenant_id, episode_id, proposed_at DESC);

-- The case inbox: one row per episode (a page is one index walk, no join), rewritten (pipelines/detect/case-inbox.ts) whenever what
-- it holds may change: an alert joins, the episode's severity rises, a case action, an
-- assignment, a report proposal or decision, the tenant's SLA. Each sort has its index; open
-- (case_status <> 'closed') leads so the default list walks only the open work.
CREATE TABLE case_inbox (
  tenant_id          text NOT NULL,
  episode_id         uuid NOT NULL,
  open               boolean NOT NULL,
  case_status        text NOT NULL,
  episode_status     text NOT NULL,
  disposition        text,
  priority           smallint NOT NULL CHECK (priority BETWEEN 1 AND 4),
  opened_at          timestamptz NOT NULL,
  due_at             timestamptz,
  amount_value       numeric(38, 0),
  amount_asset       text,
  typologies         text[] NOT NULL,
  assignee_user_id   uuid,
  awaiting_approval  boolean NOT NULL,
  alert_count        integer NOT NULL,
  last_alert_at      timestamptz NOT NULL,
  -- The first subjects (kind, external_id) in order, and how many there are.
  subjects           jsonb NOT NULL,
  subject_count      integer NOT NULL,
  PRIMARY KEY (tenant_id, episode_id),
  CONSTRAINT case_inbox_episode FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, episode_id)
);
CREATE INDEX case_inbox_age ON case_inbox (tenant_id, open, opened_at, episode_id);
CREATE INDEX case_inbox_due ON case_inbox (tenant_id, open, due_at, episode_id);
CREATE INDEX case_inbox_amount ON case_inbox (tenant_id, open, amount_value DESC NULLS LAST, episode_id);
CREATE INDEX case_inbox_priority ON case_inbox (tenant_id, open, priority DESC, opened_at, episode_id);
CREATE INDEX case_inbox_assignee ON case_inbox (tenant_id, assignee_user_id, opened_at, episode_id);
CREATE INDEX case_inbox_typologies ON case_inbox USING gin (typologies);

-- An episode's alerts (the inbox's typologies and amount, the case page).
CREATE INDEX alerts_episode ON alerts (tenant_id, episode_id) WHERE mode = 'live';

-- The episodes already there, with the default SLA hours of the time (critical 48, high 168,
-- medium 336, low 720): the same rows refreshCaseInbox writes.
INSERT INTO case_inbox (tenant_id, episode_id, open, case_status, episode_status, disposition, priority, opened_at, due_at, amount_value, amount_asset,
                        typologies, assignee_user_id, awaiting_approval, alert_count, last_alert_at, subjects, subject_count)
SELECT e.tenant_id, e.episode_id, e.case_status <> 'closed', e.case_status, e.status, e.disposition,
       (CASE e.severity WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END), e.created_at,
       CASE WHEN e.case_status = 'closed' THEN NULL
            ELSE e.created_at + make_interval(hours => CASE e.severity WHEN 'critical' THEN 48 WHEN 'high' THEN 168 WHEN 'medium' THEN 336 ELSE 720 END) END,
       amount.value, CASE WHEN amount.value IS NULL THEN NULL ELSE t.base_asset END,
       coalesce((SELECT array_agg(DISTINCT a.typology ORDER BY a.typology) FROM alerts a
                  WHERE a.tenant_id = e.tenant_id AND a.episode_id = e.episode_id AND a.mode = 'live'), '{}'),
       (SELECT c.user_id FROM console_assignments c WHERE c.tenant_id = e.tenant_id AND c.episode_id = e.episode_id),
       false, e.alert_count, e.last_alert_at, subjects.list, subjects.n
  FROM episodes e
  JOIN tenants t ON t.tenant_id = e.tenant_id
  CROSS JOIN LATERAL (
    SELECT max((h.evidence -> 'amounts' ->> 'total')::numeric) AS value
      FROM alerts a
      CROSS JOIN LATERAL (SELECT x.evidence FROM alert_evidence x WHERE x.tenant_id = a.tenant_id AND x.alert_id = a.alert_id
                           ORDER BY (x.score = a.score AND x.severity = a.severity) DESC, x.seq DESC LIMIT 1) h
     WHERE a.tenant_id = e.tenant_id AND a.episode_id = e.episode_id AND a.mode = 'live'
       AND h.evidence -> 'amounts' ->> 'asset' = t.base_asset
       AND h.evidence -> 'amounts' ->> 'total' ~ '^[0-9]{1,38}$') amount
  CROSS JOIN LATERAL (
    SELECT count(*)::int AS n,
           coalesce(jsonb_agg(jsonb_build_object('kind', m.subject_kind, 'external_id', m.subject_id) ORDER BY m.subject_kind, m.subject_id)
                      FILTER (WHERE m.rank <= 20), '[]'::jsonb) AS list
      FROM (SELECT subject_kind, subject_id, row_number() OVER (ORDER BY subject_kind, subject_id) AS rank
              FROM episode_members WHERE tenant_id = e.tenant_id AND episode_id = e.episode_id AND role = 'subject') m) subjects;
