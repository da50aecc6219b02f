DROP TABLE IF EXISTS judged_subjects;
