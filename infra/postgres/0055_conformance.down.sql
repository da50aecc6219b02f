DROP TABLE conformance_states;
DROP TABLE conformance_tallies;
