"""Exam problems with answer keys: random hand-friendly specs, an exam paper, its key, JSON and Moodle XML."""
