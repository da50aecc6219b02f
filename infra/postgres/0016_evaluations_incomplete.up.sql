-- Whether a subject's latest outcomes leave it unjudged: most detectors that apply answered a
-- non-result (insufficient_data or stale). Posture reads it to tell a low band from an incomplete
-- one, and detection's evaluations write compares it before and after, to find the parties whose
-- band may have changed. Computed once, when the row is written: worked out from the outcomes at
-- every read, it was expanded four times per written row (half of that statement's time).
ALTER TABLE subject_evaluations ADD COLUMN incomplete boolean NOT NULL GENERATED ALWAYS AS (
  jsonb_array_length(jsonb_path_query_array(outcomes, '$.* ? (@ == "insufficient_data" || @ == "stale")')) * 2
    > jsonb_array_length(jsonb_path_query_array(outcomes, '$.* ? (@ != "not_applicable")'))
) STORED;
