package io.betree.bench.jmh;

import io.betree.bench.workload.PhaseResult;
import io.betree.bench.workload.Results;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * A JMH profiler ({@code -prof io.betree.bench.jmh.PhaseMetricsProfiler}) that adds the figures of
 * every phase a benchmark iteration recorded to the JMH results as secondary metrics named
 * {@code <phase>.<figure>}, e.g. {@code insert.terminal_rows_per_s} or {@code scan-100-cold.p99_us},
 * so the JMH JSON carries the same numbers as {@code summary.tsv}.
 */
public final class PhaseMetricsProfiler implements InternalProfiler {

    @Override
    public String getDescription() {
        return "betree benchmark phase figures (throughput, latency percentiles, amplification, CPU, cores busy, heap)";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        Results.drainRecent();
    }

    /** JMH declares this method with the raw {@code Result} type; the results are {@link ScalarResult}s. */
    @Override
    @SuppressWarnings("rawtypes")
    public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
            IterationParams iterationParams, IterationResult result) {
        List<ScalarResult> out = new ArrayList<>();
        for (PhaseResult r : Results.drainRecent()) {
            for (Map.Entry<String, Double> f : r.figures().entrySet()) {
                out.add(new ScalarResult(r.phase() + "." + f.getKey(), f.getValue(), unit(f.getKey()),
                        AggregationPolicy.AVG));
            }
        }
        return out;
    }

    private static String unit(String figure) {
        if (figure.endsWith("_us")) {
            return "us";
        }
        if (figure.endsWith("_per_s")) {
            return figure.startsWith("mb") ? "MB/s" : "rows/s";
        }
        if (figure.endsWith("_mib")) {
            return "MiB";
        }
        if (figure.startsWith("cpu")) {
            return "s/Mrows";
        }
        if (figure.equals("cores_busy")) {
            return "cores";
        }
        return "x";
    }
}
