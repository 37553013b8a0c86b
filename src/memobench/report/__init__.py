"""Reports: turn run folders' ledgers into paper tables, figures and an HTML page.

Modules, one job each:

- :mod:`~memobench.report.runs` - load run folders, group them into conditions
  (policy, replan interval, oracle level);
- :mod:`~memobench.report.result_tables` - the table data (main, Wilson, per task,
  failures) and :mod:`~memobench.report.render` - Markdown / CSV / LaTeX / HTML;
- :mod:`~memobench.report.oracle` - oracle-vs-standard pairing and the gap closed;
- :mod:`~memobench.report.figures` - matplotlib figures (imported lazily);
- :mod:`~memobench.report.html` - the ``index.html`` page;
- :mod:`~memobench.report.build` - all of the above into one output folder;
- :mod:`~memobench.report.compare` - paired comparison of two runs;
- :mod:`~memobench.report.sweep` - the replan / oracle sweep plan;
- :mod:`~memobench.report.annotations` - blind relabelling sheets and Fleiss' kappa;
- :mod:`~tests.report.synthetic_runs` - synthetic run folders for tests and benchmarks.

Importing this package does not import matplotlib.
"""
