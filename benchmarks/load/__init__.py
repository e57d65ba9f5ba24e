"""The parts of benchmarks/bench_load.py: the workload, the measures, the PostgreSQL it may bring."""
