package io.betree.bench.report;

import io.betree.bench.workload.PhaseResult;
import io.betree.bench.workload.Results;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Turns a results directory ({@code summary.tsv} and {@code series/*.csv}) into {@code results.md}
 * (one table per workload) and {@code charts/*.png}: the insert rate over time per engine, the FIFO
 * queue's disk size and head-read latency over time, and a bar chart per workload.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.betree.bench.report.Report RESULTS_DIR [TITLE]}.
 */
public final class Report {
    private static final List<String> ENGINES = List.of("betree", "rocksdb", "lmdb");

    private Report() {
    }

    /** Writes the report of {@code args[0]}, titled {@code args[1]}. */
    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: Report RESULTS_DIR [TITLE]");
            System.exit(2);
        }
        Path md = write(Path.of(args[0]), args.length > 1 ? args[1] : "betree benchmarks");
        System.out.println("report: " + md.toAbsolutePath());
    }

    /** Writes {@code results.md} and the charts into {@code dir}; returns the Markdown file. */
    public static Path write(Path dir, String title) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<PhaseResult> all = latest(Results.read(dir));
        Path charts = dir.resolve("charts");
        Files.createDirectories(charts);
        StringBuilder md = new StringBuilder();
        md.append("# ").append(title).append("\n\n");
        md.append("Generated ").append(ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME))
                .append(" from `summary.tsv` (").append(all.size()).append(" phases) on ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
                .append(System.getProperty("os.name")).append(", Java ").append(System.getProperty("java.version"))
                .append(". Scale: ").append(String.join(", ", distinct(all, PhaseResult::scale)))
                .append(". Latencies are per request: a 1,000-row batch for writes, one lookup, one scan. ")
                .append("Amplification: bytes sent to storage (or on disk) per logical key+value byte. ")
                .append("See docs/benchmarks.md for the workloads and fairness rules.\n\n");

        List<PhaseResult> insert = of(all, "insert");
        md.append("## Insert (iiBench, 4 indexes, 1,000 rows per batch)\n\n");
        md.append(table(insert, writeColumns()));
        line(dir, charts.resolve("insert-rate.png"), "iiBench insert rate over time", "insert", "elapsed_s",
                "rows_per_s", "elapsed seconds", "rows/s");
        bars(charts.resolve("insert.png"), "iiBench insert", "rows/s", insert, List.of("overall", "terminal"),
                List.of(PhaseResult::rowsPerSec, PhaseResult::terminalRowsPerSec));
        md.append("\n![insert rate over time](charts/insert-rate.png)\n![insert](charts/insert.png)\n\n");

        List<PhaseResult> fifo = of(all, "fifo");
        md.append("## Delete-FIFO (insert 1,000, delete the oldest 1,000)\n\n");
        md.append(table(filter(fifo, "fifo"), writeColumns()));
        md.append("\nReading the queue's head (the oldest live row) as deletes accumulate:\n\n");
        md.append(table(filter(fifo, "fifo-head"), readColumns("head reads/s", false)));
        bars(charts.resolve("fifo.png"), "Delete-FIFO churn", "rows inserted/s", filter(fifo, "fifo"),
                List.of("overall", "terminal"), List.of(PhaseResult::rowsPerSec, PhaseResult::terminalRowsPerSec));
        line(dir, charts.resolve("fifo-disk.png"), "Delete-FIFO: size on disk", "fifo", "rows_deleted", "disk_mib",
                "rows deleted", "MiB on disk");
        line(dir, charts.resolve("fifo-head.png"), "Delete-FIFO: reading the queue's head", "fifo", "rows_deleted",
                "head_read_us", "rows deleted", "microseconds");
        md.append("\n![fifo](charts/fifo.png)\n![fifo disk](charts/fifo-disk.png)\n")
                .append("![fifo head](charts/fifo-head.png)\n\n");

        List<PhaseResult> lookup = of(all, "lookup");
        md.append("## Point lookups (primary key, hit and miss, warm and cold)\n\n");
        md.append(table(lookup, readColumns("lookups/s", false)));
        perPhaseBars(charts.resolve("lookup.png"), "Point lookups", "lookups/s", lookup);
        md.append("\n![lookups](charts/lookup.png)\n\n");

        List<PhaseResult> scan = of(all, "scan");
        md.append("## Range scans (primary index: 100 rows, 10,000 rows, all; warm and cold)\n\n");
        md.append(table(scan, readColumns("rows/s", true)));
        perPhaseBars(charts.resolve("scan.png"), "Range scans", "rows/s", scan);
        md.append("\n![scans](charts/scan.png)\n\n");

        List<PhaseResult> comp = of(all, "compression");
        md.append("## Compression (log rows)\n\n");
        md.append(table(comp, compressionColumns()));
        List<String> codecs = distinct(comp, PhaseResult::codec);
        bars(charts.resolve("compression.png"), "Compression: bytes on disk per logical byte (lower is better)",
                "disk bytes / logical byte", comp, codecs, codecs.stream()
                        .<ToDoubleFunction<PhaseResult>>map(c -> r -> r.codec().equals(c) ? r.spaceAmp() : Double.NaN)
                        .toList());
        md.append("\n![compression](charts/compression.png)\n\n");

        List<PhaseResult> writes = new ArrayList<>(insert);
        writes.addAll(filter(fifo, "fifo"));
        bars(charts.resolve("amplification.png"), "Write and space amplification", "bytes per logical byte",
                writes, List.of("insert write", "insert space", "fifo write", "fifo space"),
                List.of(r -> r.phase().equals("insert") ? r.writeAmp() : Double.NaN,
                        r -> r.phase().equals("insert") ? r.spaceAmp() : Double.NaN,
                        r -> r.phase().equals("fifo") ? r.writeAmp() : Double.NaN,
                        r -> r.phase().equals("fifo") ? r.spaceAmp() : Double.NaN));
        md.append("## Amplification\n\n![amplification](charts/amplification.png)\n");

        Path out = dir.resolve("results.md");
        Files.writeString(out, md.toString(), StandardCharsets.UTF_8);
        return out;
    }

    /** The last result of each (workload, phase, engine, codec), in first-seen order. */
    private static List<PhaseResult> latest(List<PhaseResult> all) {
        Map<String, PhaseResult> m = new LinkedHashMap<>();
        for (PhaseResult r : all) {
            m.put(r.workload() + "/" + r.phase() + "/" + r.engine() + "/" + r.codec(), r);
        }
        List<PhaseResult> out = new ArrayList<>(m.values());
        out.sort((a, b) -> Integer.compare(rank(a.engine()), rank(b.engine())));
        return out;
    }

    private static int rank(String engine) {
        int i = ENGINES.indexOf(engine);
        return i < 0 ? ENGINES.size() : i;
    }

    private static List<PhaseResult> of(List<PhaseResult> all, String workload) {
        return all.stream().filter(r -> r.workload().equals(workload)).toList();
    }

    private static List<PhaseResult> filter(List<PhaseResult> rs, String phase) {
        return rs.stream().filter(r -> r.phase().equals(phase)).toList();
    }

    private static List<String> distinct(List<PhaseResult> rs, Function<PhaseResult, String> f) {
        return rs.stream().map(f).distinct().toList();
    }

    private record Column(String name, Function<PhaseResult, String> value) {
    }

    private static List<Column> writeColumns() {
        return List.of(new Column("engine", PhaseResult::engine), new Column("codec", PhaseResult::codec),
                new Column("rows", r -> String.format(Locale.ROOT, "%,d", r.rows())), new Column("rows/s", r -> fmt(r.rowsPerSec())),
                new Column("terminal rows/s", r -> fmt(r.terminalRowsPerSec())),
                new Column("p50 ms", r -> fmt(r.p50Micros() / 1e3)), new Column("p99 ms", r -> fmt(r.p99Micros() / 1e3)),
                new Column("p99.9 ms", r -> fmt(r.p999Micros() / 1e3)), new Column("write amp", r -> amp(r.writeAmp())),
                new Column("space amp", r -> amp(r.spaceAmp())), new Column("disk MiB", r -> fmt(r.diskBytes() / 1048576.0)),
                new Column("CPU s/M rows", r -> fmt(r.cpuSecPerMillionRows())),
                new Column("peak heap MiB", r -> heap(r)), new Column("note", PhaseResult::note));
    }

    private static List<Column> readColumns(String rate, boolean mbps) {
        List<Column> c = new ArrayList<>(List.of(new Column("engine", PhaseResult::engine),
                new Column("phase", PhaseResult::phase), new Column("requests", r -> String.format(Locale.ROOT, "%,d", r.requests())),
                new Column(rate, r -> fmt(r.rowsPerSec()))));
        if (mbps) {
            c.add(new Column("MB/s", r -> fmt(r.mbPerSec())));
        }
        c.addAll(List.of(new Column("p50 us", r -> fmt(r.p50Micros())), new Column("p99 us", r -> fmt(r.p99Micros())),
                new Column("p99.9 us", r -> fmt(r.p999Micros())),
                new Column("CPU s/M rows", r -> fmt(r.cpuSecPerMillionRows())),
                new Column("peak heap MiB", r -> heap(r)), new Column("note", PhaseResult::note)));
        return c;
    }

    private static List<Column> compressionColumns() {
        return List.of(new Column("engine", PhaseResult::engine), new Column("codec", PhaseResult::codec),
                new Column("logical MiB", r -> fmt(r.logicalBytes() / 1048576.0)),
                new Column("disk MiB", r -> fmt(r.diskBytes() / 1048576.0)),
                new Column("disk/logical", r -> String.format(Locale.ROOT, "%.3f", r.spaceAmp())),
                new Column("load MB/s", r -> fmt(r.mbPerSec())), new Column("rows/s", r -> fmt(r.rowsPerSec())),
                new Column("p99 ms", r -> fmt(r.p99Micros() / 1e3)), new Column("write amp", r -> amp(r.writeAmp())),
                new Column("CPU s/M rows", r -> fmt(r.cpuSecPerMillionRows())),
                new Column("peak heap MiB", r -> heap(r)), new Column("note", PhaseResult::note));
    }

    private static String table(List<PhaseResult> rows, List<Column> cols) {
        if (rows.isEmpty()) {
            return "(no results)\n";
        }
        StringBuilder b = new StringBuilder("|");
        StringBuilder rule = new StringBuilder("|");
        for (Column c : cols) {
            b.append(' ').append(c.name()).append(" |");
            rule.append(c.name().equals("engine") || c.name().equals("phase") || c.name().equals("codec")
                    || c.name().equals("note") ? "---|" : "---:|");
        }
        b.append('\n').append(rule).append('\n');
        for (PhaseResult r : rows) {
            b.append('|');
            for (Column c : cols) {
                b.append(' ').append(c.value().apply(r).replace("|", "/")).append(" |");
            }
            b.append('\n');
        }
        return b.toString();
    }

    /** Bars of several figures per engine: groups are the figures, series the engines. */
    private static void bars(Path png, String title, String yLabel, List<PhaseResult> rows, List<String> groups,
            List<ToDoubleFunction<PhaseResult>> figures) throws IOException {
        List<String> engines = distinct(rows, PhaseResult::engine);
        double[][] v = new double[engines.size()][groups.size()];
        for (int s = 0; s < engines.size(); s++) {
            for (int k = 0; k < groups.size(); k++) {
                v[s][k] = Double.NaN;
                for (PhaseResult r : rows) {
                    double x = figures.get(k).applyAsDouble(r);
                    if (r.engine().equals(engines.get(s)) && Double.isFinite(x)) {
                        v[s][k] = x;
                    }
                }
            }
        }
        Charts.bars(png, title, yLabel, groups, engines, v);
    }

    /** Bars of rows/s per phase (groups) and engine (series). */
    private static void perPhaseBars(Path png, String title, String yLabel, List<PhaseResult> rows)
            throws IOException {
        List<String> phases = distinct(rows, PhaseResult::phase);
        bars(png, title, yLabel, rows, phases, phases.stream()
                .<ToDoubleFunction<PhaseResult>>map(p -> r -> r.phase().equals(p) ? r.rowsPerSec() : Double.NaN)
                .toList());
    }

    /** A line per engine from {@code series/<prefix>-<engine>.csv}. */
    private static void line(Path dir, Path png, String title, String prefix, String xCol, String yCol,
            String xLabel, String yLabel) throws IOException {
        Map<String, double[][]> series = new LinkedHashMap<>();
        for (String engine : ENGINES) {
            Path csv = dir.resolve("series").resolve(prefix + "-" + engine + ".csv");
            if (!Files.exists(csv)) {
                continue;
            }
            List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
            List<String> header = List.of(lines.get(0).split(","));
            int xi = header.indexOf(xCol);
            int yi = header.indexOf(yCol);
            double[][] xy = new double[2][lines.size() - 1];
            for (int i = 1; i < lines.size(); i++) {
                String[] f = lines.get(i).split(",");
                xy[0][i - 1] = Double.parseDouble(f[xi]);
                xy[1][i - 1] = Double.parseDouble(f[yi]);
            }
            series.put(engine, xy);
        }
        Charts.line(png, title, xLabel, yLabel, series);
    }

    /** A number for a table: grouped thousands, fewer decimals as it grows. */
    static String fmt(double v) {
        if (!Double.isFinite(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%,.0f" : a >= 10 ? "%.1f" : a >= 0.1 ? "%.2f" : "%.3f", v);
    }

    private static String heap(PhaseResult r) {
        return r.peakHeapBytes() > 0 ? fmt(r.peakHeapBytes() / 1048576.0) : "n/a";
    }

    private static String amp(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.2f", v) : "n/a";
    }

    /** A number for a chart label: 1.2k, 3.4M. */
    static String compact(double v) {
        double a = Math.abs(v);
        if (a >= 1e9) {
            return trim(v / 1e9) + "G";
        }
        if (a >= 1e6) {
            return trim(v / 1e6) + "M";
        }
        if (a >= 1e3) {
            return trim(v / 1e3) + "k";
        }
        return trim(v);
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, Math.abs(v) >= 100 || v == Math.rint(v) ? "%.0f" : "%.2g", v);
        return s.contains("e") ? String.format(Locale.ROOT, "%.3f", v) : s;
    }
}
