-- The latest instant each subject was judged at for a fact it took part in (detection's commit
-- writes it; pipelines/detect/judged.ts). A fact that arrives after later facts of its subject is
-- judged again at those later facts only if one of them was judged already: a later fact not yet
-- judged will be, with the late one in its windows.
CREATE TABLE judged_subjects (
  tenant_id     text NOT NULL,
  subject_kind  text NOT NULL,
  subject_id    text NOT NULL,
  judged_to     timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, subject_kind, subject_id)
) WITH (fillfactor = 70); -- room on each page for the updates of judged_to to stay HOT
