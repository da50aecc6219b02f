-- Whether a subject's latest outcomes leave it unjudged: non-results (insufficient_data, stale)
-- are more than half of the detectors that apply. Posture reads it to tell a low band from an
-- incomplete one, and detection's evaluations write compares it before and after, to find the
-- parties whose band may have changed. Computed once, when the row is written: worked out from the
-- outcomes at every read, they were expanded four times per written row (in a replay of
-- bench:detect's stream that write took 60 ms per call, and 51 ms with the column).
ALTER TABLE subject_evaluations ADD COLUMN incomplete boolean NOT NULL GENERATED ALWAYS AS (
  jsonb_array_length(jsonb_path_query_array(outcomes, '$.* ? (@ == "insufficient_data" || @ == "stale")')) * 2
    > jsonb_array_length(jsonb_path_query_array(outcomes, '$.* ? (@ != "not_applicable")'))
) STORED;
