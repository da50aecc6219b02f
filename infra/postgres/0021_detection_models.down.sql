DROP TABLE IF EXISTS detection_models;
