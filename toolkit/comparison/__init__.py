"""``privtool compare``: run several methods on the same data over a parameter
grid, verify every release, measure it, time it, and tabulate and plot the lot.

A method is given as a SPEC (:mod:`privtool.comparison.spec`); the grid is the
product of ``--k``, ``--m`` and every ``--grid NAME=V1,V2``, repeated ``--repeat``
times with seeds ``seed, seed+1, ...``. Each finished cell is stored under
``DIR/cells/`` so an interrupted run resumes where it stopped
(:mod:`privtool.comparison.runner`); ``results.csv``, ``results.json``, the plots and
``index.html`` are written from the cells (:mod:`privtool.comparison.report`).
"""
