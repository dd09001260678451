package io.betree.bench.workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The figures of one measured phase of one workload on one engine: the row of {@code summary.tsv}
 * and of the Markdown report, and the secondary results the JMH profiler adds to the JMH JSON.
 *
 * <p>A <em>request</em> is what a latency is measured for (a 1,000-row batch, one lookup, one
 * scan); a <em>row</em> is one logical row inserted, looked up or scanned. Throughput, CPU time and
 * MB/s are per row; cores busy is the process's CPU seconds per wall second. NaN means "does not
 * apply" (no write amplification for a read-only phase).
 *
 * @param scale scale preset
 * @param workload insert, fifo, timeseries, lookup, scan, compression, counters, update-non-index,
 *     broadcast or range-delete
 * @param phase the measured part, e.g. {@code scan-100-cold}
 * @param engine engine name
 * @param codec codec the engine used
 * @param requests latency-measured requests
 * @param rows logical rows
 * @param seconds wall seconds of the phase (final flush included for writes)
 * @param logicalBytes key and value bytes the phase wrote (writes) or read (reads)
 * @param storageWritten bytes the process sent to storage in the phase, -1 if unknown
 * @param diskBytes size of the engine's files at the end of the phase
 * @param liveBytes logical key and value bytes live in the store at the end
 * @param cpuSeconds CPU seconds of the process in the phase
 * @param peakHeapBytes peak Java heap in the phase, 0 when not measured
 * @param p50Micros median request latency
 * @param p99Micros 99th percentile request latency
 * @param p999Micros 99.9th percentile request latency
 * @param maxMicros the slowest request's latency
 * @param terminalRowsPerSec rows/s over the last 10% of the rows (writes), NaN otherwise
 * @param note free text (bounds, checks, caveats), no tabs
 */
public record PhaseResult(String scale, String workload, String phase, String engine, String codec, long requests,
        long rows, double seconds, long logicalBytes, long storageWritten, long diskBytes, long liveBytes,
        double cpuSeconds, long peakHeapBytes, double p50Micros, double p99Micros, double p999Micros,
        double maxMicros, double terminalRowsPerSec, String note) {

    /** Column names of {@link #toTsv()}. */
    public static final List<String> COLUMNS = List.of("scale", "workload", "phase", "engine", "codec", "requests",
            "rows", "seconds", "logical_bytes", "storage_written", "disk_bytes", "live_bytes", "cpu_seconds",
            "peak_heap_bytes", "p50_us", "p99_us", "p999_us", "max_us", "terminal_rows_per_s", "note");

    /** Rows per second over the whole phase. */
    public double rowsPerSec() {
        return rows / seconds;
    }

    /** Logical megabytes (10^6) per second. */
    public double mbPerSec() {
        return logicalBytes / seconds / 1e6;
    }

    /** Bytes sent to storage per logical byte written; NaN for reads or when unknown. */
    public double writeAmp() {
        return storageWritten < 0 || !isWrite() || logicalBytes == 0 ? Double.NaN
                : (double) storageWritten / logicalBytes;
    }

    /** On-disk bytes per live logical byte. */
    public double spaceAmp() {
        return liveBytes <= 0 ? Double.NaN : (double) diskBytes / liveBytes;
    }

    /** CPU seconds per million rows. */
    public double cpuSecPerMillionRows() {
        return rows == 0 ? Double.NaN : cpuSeconds / rows * 1e6;
    }

    /** CPU seconds of the process per wall second of the phase: how many cores it kept busy. */
    public double coresBusy() {
        return cpuSeconds / seconds;
    }

    /**
     * Whether the phase writes (insert, fifo, timeseries, compression, counters, update-non-index,
     * the broadcast or rewrite, the range delete's call).
     */
    public boolean isWrite() {
        return workload.equals("insert") || workload.equals("fifo") && !phase.equals("fifo-head")
                || workload.equals("timeseries") || workload.equals("compression")
                || workload.equals(UpdateWorkload.COUNTERS) || workload.equals(UpdateWorkload.NON_INDEX)
                || workload.equals(RangeWorkload.BROADCAST) && !phase.endsWith(RangeWorkload.SCAN)
                || phase.equals(RangeWorkload.RANGE_DELETE);
    }

    /** The headline figures by name, for the JMH profiler and the report (NaN ones left out). */
    public Map<String, Double> figures() {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("rows_per_s", rowsPerSec());
        m.put("terminal_rows_per_s", terminalRowsPerSec);
        m.put("mb_per_s", mbPerSec());
        m.put("p50_us", p50Micros);
        m.put("p99_us", p99Micros);
        m.put("p999_us", p999Micros);
        m.put("max_us", maxMicros);
        m.put("write_amp", writeAmp());
        m.put("space_amp", spaceAmp());
        m.put("disk_mib", diskBytes / 1048576.0);
        m.put("cpu_s_per_mrows", cpuSecPerMillionRows());
        m.put("cores_busy", coresBusy());
        m.put("peak_heap_mib", peakHeapBytes > 0 ? peakHeapBytes / 1048576.0 : Double.NaN);
        m.values().removeIf(v -> v == null || v.isNaN() || v.isInfinite());
        return m;
    }

    /** One tab-separated line, {@link #COLUMNS} in order. */
    public String toTsv() {
        List<String> f = new ArrayList<>(List.of(scale, workload, phase, engine, codec, Long.toString(requests),
                Long.toString(rows), num(seconds), Long.toString(logicalBytes), Long.toString(storageWritten),
                Long.toString(diskBytes), Long.toString(liveBytes), num(cpuSeconds), Long.toString(peakHeapBytes),
                num(p50Micros), num(p99Micros), num(p999Micros), num(maxMicros), num(terminalRowsPerSec),
                note.replace('\t', ' ').replace('\n', ' ')));
        return String.join("\t", f);
    }

    /**
     * Parses a line written by {@link #toTsv()}, or by the suite before it recorded the slowest
     * request (no {@code max_us} field; that figure is then NaN), as in the committed full results.
     */
    public static PhaseResult fromTsv(String line) {
        String[] f = line.split("\t", -1);
        if (f.length == COLUMNS.size() - 1) {
            List<String> withMax = new ArrayList<>(List.of(f));
            withMax.add(COLUMNS.indexOf("max_us"), "NaN");
            f = withMax.toArray(new String[0]);
        }
        if (f.length != COLUMNS.size()) {
            throw new IllegalArgumentException("expected " + COLUMNS.size() + " fields, got " + f.length + ": " + line);
        }
        return new PhaseResult(f[0], f[1], f[2], f[3], f[4], Long.parseLong(f[5]), Long.parseLong(f[6]),
                Double.parseDouble(f[7]), Long.parseLong(f[8]), Long.parseLong(f[9]), Long.parseLong(f[10]),
                Long.parseLong(f[11]), Double.parseDouble(f[12]), Long.parseLong(f[13]), Double.parseDouble(f[14]),
                Double.parseDouble(f[15]), Double.parseDouble(f[16]), Double.parseDouble(f[17]),
                Double.parseDouble(f[18]), f[19]);
    }

    private static String num(double v) {
        return String.format(Locale.ROOT, "%.6g", v);
    }
}
