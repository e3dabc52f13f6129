"""The exam's output drivers, by --format name: each reads only the versions' Exercises. Adding an LMS format is a
module with a driver class (name, version(exercise), files(shares)) and a line here."""

from __future__ import annotations

from .answers_json import JsonDriver
from .moodle import MoodleDriver
from .paper import PaperDriver

DRIVERS = {driver.name: driver for driver in (PaperDriver, JsonDriver, MoodleDriver)}
