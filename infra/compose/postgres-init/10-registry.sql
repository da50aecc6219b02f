-- The schema registry's own database (Apicurio's SQL storage), beside the service's: run once by
-- the postgres image when it initialises an empty volume.
CREATE DATABASE registry OWNER svc;
