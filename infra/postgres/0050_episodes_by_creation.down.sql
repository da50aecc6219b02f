DROP INDEX episodes_by_creation;
