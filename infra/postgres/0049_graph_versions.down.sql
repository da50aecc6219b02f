DROP TABLE graph_versions;
