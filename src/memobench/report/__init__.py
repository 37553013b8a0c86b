"""Reports: turn run folders' ledgers into paper tables, figures and an HTML page.

Modules, one job each:

- :mod:`~memobench.report.runs` - load run folders, group them into conditions
  (policy, replan interval, oracle level);
- :mod:`~memobench.report.result_tables` - the report's tables (main, Wilson, per task,
  failures, violations) and :mod:`~memobench.report.table_formats` - a table's
  Markdown / CSV / LaTeX / HTML renderings;
- :mod:`~memobench.report.oracle` - oracle-vs-standard pairing and the gap closed;
- :mod:`~memobench.report.figures` - matplotlib figures (imported lazily);
- :mod:`~memobench.report.html` - the ``index.html`` page;
- :mod:`~memobench.report.build` - all of the above into one output folder;
- :mod:`~memobench.report.compare` - paired comparison of two runs;
- :mod:`~memobench.report.sweep` - the replan / oracle sweep plan;
- :mod:`~memobench.report.annotations` - blind relabelling sheets and Fleiss' kappa;
- :mod:`~memobench.report.certify` - memory-necessity certification of the suite;
- :mod:`~memobench.report.catalogue` - the task catalogue page (``docs/tasks.md``).

Importing this package does not import matplotlib.
"""
