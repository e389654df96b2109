"""Package list for setuptools: planner's own packages plus data/ installed as planner.data (see pyproject.toml)."""

from setuptools import find_packages, setup

# pyproject's packages.find cannot add a package that lives outside planner/; data/ is mapped onto planner.data
# by [tool.setuptools.package-dir], so it is listed here beside the discovered ones.
setup(packages=find_packages(include=["planner", "planner.*"]) + ["planner.data"])
