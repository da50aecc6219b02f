-- Observed edges keep their counts, first and last seen; only the sightings behind them go.
DROP TABLE graph_sightings;
