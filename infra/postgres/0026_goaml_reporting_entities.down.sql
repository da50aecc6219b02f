DROP TABLE IF EXISTS goaml_reporting_entities;
