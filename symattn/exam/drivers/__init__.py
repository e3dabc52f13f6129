"""The exam's output drivers, by --format name: each reads only the versions' Exercises. Adding an LMS format is a
module with a driver class (drivers/base.py's Driver: name, version(exercise), files(shares)) and a line here."""

from __future__ import annotations

from .answers_json import JsonDriver
from .base import Driver, Share
from .moodle import MoodleDriver
from .paper import PaperDriver
from .qti import QtiDriver
from .solutions import SolutionsDriver

DRIVERS: dict[str, type[Driver]] = {driver.name: driver for driver in (PaperDriver, JsonDriver, MoodleDriver,
                                                                         SolutionsDriver, QtiDriver)}

__all__ = ["DRIVERS", "Driver", "Share"]
