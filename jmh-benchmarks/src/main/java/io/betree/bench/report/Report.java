package io.betree.bench.report;

import io.betree.bench.workload.PhaseResult;
import io.betree.bench.workload.RangeWorkload;
import io.betree.bench.workload.Results;
import io.betree.bench.workload.Scale;
import io.betree.bench.workload.TimeSeriesWorkload;
import io.betree.bench.workload.UpdateWorkload;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Turns a results directory ({@code summary.tsv} and {@code series/*.csv}) into {@code results.md}
 * (one table per workload) and {@code charts/*.png}: the insert rate over time per engine, the FIFO
 * queue's disk size and head-read latency over time, and a bar chart per workload. A small-cache
 * variant (scale {@code full-small}) sits in the same tables as its default, next to it, with
 * charts of its own over time. Rates are also given as ratios to RocksDB's at the same scale (and,
 * for the time series, the same thread count) and to the engine's own one-thread rate; the update
 * functions' rates (issue 11) to RocksDB's merge or get and put, and to the engine's own get and put;
 * the scans after a broadcast or a range delete to RocksDB's after its rewrite or range delete.
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
                .append("Cores busy: CPU seconds of the benchmark process per wall second of the phase. ")
                .append("÷ RocksDB: the figure divided by RocksDB's in the same phase and scale. ")
                .append("See docs/benchmarks.md for the workloads and fairness rules.\n\n");

        List<PhaseResult> insert = of(all, "insert");
        md.append("## Insert (iiBench, 4 indexes, 1,000 rows per batch)\n\n");
        md.append(table(insert, writeColumns(insert))).append('\n');
        for (String v : variants(insert)) {
            line(dir, charts.resolve("insert-rate" + v + ".png"), "iiBench insert rate over time" + cache(v),
                    "insert" + v, "elapsed_s", "rows_per_s", "elapsed seconds", "rows/s");
            md.append("![insert rate over time").append(cache(v)).append("](charts/insert-rate").append(v)
                    .append(".png)\n");
        }
        rateBars(charts.resolve("insert.png"), "iiBench insert", "rows/s", insert);
        md.append("![insert](charts/insert.png)\n\n");

        List<PhaseResult> fifo = of(all, "fifo");
        md.append("## Delete-FIFO (insert 1,000, delete the oldest 1,000)\n\n");
        md.append(table(filter(fifo, "fifo"), writeColumns(filter(fifo, "fifo"))));
        md.append("\nReading the queue's head (the oldest live row) as deletes accumulate:\n\n");
        md.append(table(filter(fifo, "fifo-head"), readColumns(filter(fifo, "fifo-head"), "head reads/s", false)));
        rateBars(charts.resolve("fifo.png"), "Delete-FIFO churn", "rows inserted/s", filter(fifo, "fifo"));
        md.append("\n![fifo](charts/fifo.png)\n");
        for (String v : variants(fifo)) {
            line(dir, charts.resolve("fifo-disk" + v + ".png"), "Delete-FIFO: size on disk" + cache(v), "fifo" + v,
                    "rows_deleted", "disk_mib", "rows deleted", "MiB on disk");
            line(dir, charts.resolve("fifo-head" + v + ".png"), "Delete-FIFO: reading the queue's head" + cache(v),
                    "fifo" + v, "rows_deleted", "head_read_us", "rows deleted", "microseconds");
            md.append("![fifo disk").append(cache(v)).append("](charts/fifo-disk").append(v).append(".png)\n")
                    .append("![fifo head").append(cache(v)).append("](charts/fifo-head").append(v).append(".png)\n");
        }
        md.append('\n');

        List<PhaseResult> series = new ArrayList<>(of(all, "timeseries"));
        series.sort(Comparator.comparingInt((PhaseResult r) -> rank(r.engine()))
                .thenComparingInt(TimeSeriesWorkload::threads));
        md.append("## Time series (1,000 sensors, one time step per transaction, N writer threads)\n\n");
        md.append(table(series, timeSeriesColumns(series)));
        List<Integer> threads = series.stream().map(TimeSeriesWorkload::threads).distinct().sorted().toList();
        bars(charts.resolve("timeseries.png"), "Time-series insert by writer threads", "rows/s", series,
                threads.stream().map(t -> t + (t == 1 ? " thread" : " threads")).toList(), threads.stream()
                        .<ToDoubleFunction<PhaseResult>>map(t -> r -> TimeSeriesWorkload.threads(r) == t
                                ? r.rowsPerSec() : Double.NaN)
                        .toList());
        md.append("\n![time series](charts/timeseries.png)\n\n");

        List<PhaseResult> counters = of(all, UpdateWorkload.COUNTERS);
        List<PhaseResult> fields = of(all, UpdateWorkload.NON_INDEX);
        md.append("## Update functions (issue 11)\n\n");
        md.append("N client threads in batches of increments or updates, one transaction (betree) or write batch ")
                .append("(RocksDB) each; latencies are per batch. LMDB has no merge and is not run.\n\n");
        md.append("Counters: increment a random 8-byte counter by 1 (`update`: betree's update function, ")
                .append("`merge`: RocksDB's `uint64add`, `get-put`: a get and a put in a betree transaction).\n\n");
        md.append(table(counters, updateColumns(counters, "increments", "RocksDB merge", "merge", false)));
        md.append("\nupdate_non_index: set a 4-byte field of a random 120-byte row (`update`: betree's update ")
                .append("function, `get-put`: a get and a put, in a transaction in betree).\n\n");
        md.append(table(fields, updateColumns(fields, "updates", "RocksDB get-put", UpdateWorkload.GET_PUT, true)));
        List<PhaseResult> updates = new ArrayList<>(counters);
        updates.addAll(fields);
        // Bars side by side where the engines do the same thing: betree's update next to RocksDB's merge.
        boolean severalThreads = updates.stream().map(UpdateWorkload::threads).distinct().count() > 1;
        Function<PhaseResult, String> label = r -> {
            boolean getPut = UpdateWorkload.variant(r).equals(UpdateWorkload.GET_PUT);
            String l = r.workload().equals(UpdateWorkload.COUNTERS) ? getPut ? "counters get-put"
                    : "counters update / merge" : getPut ? "fields get-put" : "fields update";
            return severalThreads ? l + " (" + UpdateWorkload.threads(r) + " threads)" : l;
        };
        List<String> labels = distinct(updates, label);
        bars(charts.resolve("updates.png"), "Update functions: increments or updates per second", "per second",
                updates, labels, labels.stream()
                        .<ToDoubleFunction<PhaseResult>>map(l -> r -> label.apply(r).equals(l) ? r.rowsPerSec()
                                : Double.NaN)
                        .toList());
        md.append("\n![update functions](charts/updates.png)\n\n");

        List<PhaseResult> broadcast = of(all, RangeWorkload.BROADCAST);
        List<PhaseResult> ranges = of(all, RangeWorkload.RANGE_DELETE);
        md.append("## Broadcast update and range delete (issue 11)\n\n");
        md.append("One thread on a fresh store of 8-byte keys and 100-byte values. Broadcast: append 4 bytes to ")
                .append("every row (`update-all`: betree's `updateAll`, one call; `rewrite`: scan and put every row ")
                .append("in batches of 1,000, betree and RocksDB), then a full scan right after, nothing flushed; ")
                .append("write ms is the call or the whole rewrite, latencies per batch. The issue's target: a ")
                .append("broadcast or range-delete call under 10 ms whatever the row count.\n\n");
        List<PhaseResult> changes = broadcast.stream().filter(r -> !r.phase().endsWith(RangeWorkload.SCAN)).toList();
        md.append(table(changes, broadcastColumns(changes, broadcast)));
        md.append("\nRange delete: delete the lower half of the keys in one call (betree's `deleteRange`, ")
                .append("RocksDB's `deleteRange`), then a full scan of the upper half right after, then gets of ")
                .append("random keys of the deleted half (all absent).\n\n");
        List<PhaseResult> calls = filter(ranges, RangeWorkload.RANGE_DELETE);
        md.append(table(calls, rangeDeleteColumns(calls, ranges))).append('\n');

        List<PhaseResult> lookup = of(all, "lookup");
        md.append("## Point lookups (primary key, hit and miss, warm and cold)\n\n");
        md.append(table(lookup, readColumns(lookup, "lookups/s", false)));
        perPhaseBars(charts.resolve("lookup.png"), "Point lookups", "lookups/s", lookup);
        md.append("\n![lookups](charts/lookup.png)\n\n");

        List<PhaseResult> scan = of(all, "scan");
        md.append("## Range scans (primary index: 100 rows, 10,000 rows, all; warm and cold)\n\n");
        md.append(table(scan, readColumns(scan, "rows/s", true)));
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
        writes.removeIf(r -> !Scale.variant(r.scale()).isEmpty());
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

    /**
     * The last result of each (scale, workload, phase, engine, codec), by engine, a scale's default
     * before its variants, and otherwise in first-seen order.
     */
    private static List<PhaseResult> latest(List<PhaseResult> all) {
        Map<String, PhaseResult> m = new LinkedHashMap<>();
        for (PhaseResult r : all) {
            m.put(r.scale() + "/" + r.workload() + "/" + r.phase() + "/" + r.engine() + "/" + r.codec(), r);
        }
        List<PhaseResult> out = new ArrayList<>(m.values());
        out.sort(Comparator.comparingInt((PhaseResult r) -> rank(r.engine()))
                .thenComparing(r -> !Scale.variant(r.scale()).isEmpty()));
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

    /** The engine and {@code second} columns, then a scale column when {@code rows} hold several scales. */
    private static List<Column> leading(List<PhaseResult> rows, Column second) {
        List<Column> c = new ArrayList<>(List.of(new Column("engine", PhaseResult::engine), second));
        if (distinct(rows, PhaseResult::scale).size() > 1) {
            c.add(new Column("scale", PhaseResult::scale));
        }
        return c;
    }

    private static List<Column> writeColumns(List<PhaseResult> rows) {
        List<Column> c = leading(rows, new Column("codec", PhaseResult::codec));
        c.addAll(List.of(new Column("rows", r -> count(r.rows())), new Column("rows/s", r -> fmt(r.rowsPerSec())),
                new Column("terminal rows/s", r -> fmt(r.terminalRowsPerSec())),
                ratio("terminal ÷ RocksDB", rows, PhaseResult::terminalRowsPerSec, Report::sameAsRocksDb),
                new Column("p50 ms", r -> fmt(r.p50Micros() / 1e3)),
                new Column("p99 ms", r -> fmt(r.p99Micros() / 1e3)),
                new Column("p99.9 ms", r -> fmt(r.p999Micros() / 1e3)),
                new Column("max ms", r -> fmt(r.maxMicros() / 1e3)),
                new Column("write amp", r -> amp(r.writeAmp())), new Column("space amp", r -> amp(r.spaceAmp())),
                new Column("disk MiB", r -> fmt(r.diskBytes() / 1048576.0)),
                new Column("CPU s/M rows", r -> fmt(r.cpuSecPerMillionRows())),
                new Column("cores busy", r -> fmt(r.coresBusy())), new Column("peak heap MiB", r -> heap(r)),
                new Column("note", PhaseResult::note)));
        return c;
    }

    /**
     * Columns of the time-series table: rates with their ratio to the engine's own one-thread rate
     * and to RocksDB's with as many threads; latency per transaction.
     */
    private static List<Column> timeSeriesColumns(List<PhaseResult> rows) {
        List<Column> c = leading(rows, new Column("codec", PhaseResult::codec));
        c.addAll(List.of(new Column("threads", r -> Integer.toString(TimeSeriesWorkload.threads(r))),
                new Column("rows", r -> count(r.rows())), new Column("rows/s", r -> fmt(r.rowsPerSec())),
                ratio("rows/s ÷ 1 thread", rows, PhaseResult::rowsPerSec,
                        (r, o) -> o.engine().equals(r.engine()) && o.scale().equals(r.scale())
                                && TimeSeriesWorkload.threads(o) == 1),
                ratio("rows/s ÷ RocksDB", rows, PhaseResult::rowsPerSec, Report::sameAsRocksDb),
                new Column("terminal rows/s", r -> fmt(r.terminalRowsPerSec())),
                new Column("p50 ms", r -> fmt(r.p50Micros() / 1e3)),
                new Column("p99 ms", r -> fmt(r.p99Micros() / 1e3)),
                new Column("max ms", r -> fmt(r.maxMicros() / 1e3)), new Column("write amp", r -> amp(r.writeAmp())),
                new Column("space amp", r -> amp(r.spaceAmp())),
                new Column("disk MiB", r -> fmt(r.diskBytes() / 1048576.0)),
                new Column("CPU s/M rows", r -> fmt(r.cpuSecPerMillionRows())),
                new Column("cores busy", r -> fmt(r.coresBusy())), new Column("peak heap MiB", r -> heap(r)),
                new Column("note", PhaseResult::note)));
        return c;
    }

    /**
     * Columns of an update-function table: the rate as a ratio to RocksDB's variant {@code rocksDb}
     * and to the same engine's get and put, both with as many threads; {@code getPutFirst} puts the
     * latter first (update_non_index, whose target is against get and put).
     */
    private static List<Column> updateColumns(List<PhaseResult> rows, String what, String rocksName, String rocksDb,
            boolean getPutFirst) {
        BiPredicate<PhaseResult, PhaseResult> sameRun = (r, o) -> o.scale().equals(r.scale())
                && o.workload().equals(r.workload()) && UpdateWorkload.threads(o) == UpdateWorkload.threads(r);
        Column vsRocks = ratio("÷ " + rocksName, rows, PhaseResult::rowsPerSec, (r, o) -> sameRun.test(r, o)
                && o.engine().equals("rocksdb") && UpdateWorkload.variant(o).equals(rocksDb));
        Column vsGetPut = ratio("÷ get-put", rows, PhaseResult::rowsPerSec, (r, o) -> sameRun.test(r, o)
                && o.engine().equals(r.engine()) && UpdateWorkload.variant(o).equals(UpdateWorkload.GET_PUT));
        List<Column> c = leading(rows, new Column("variant", UpdateWorkload::variant));
        c.addAll(List.of(new Column("threads", r -> Integer.toString(UpdateWorkload.threads(r))),
                new Column(what, r -> count(r.rows())), new Column(what + "/s", r -> fmt(r.rowsPerSec())),
                getPutFirst ? vsGetPut : vsRocks, getPutFirst ? vsRocks : vsGetPut,
                new Column("p50 ms", r -> fmt(r.p50Micros() / 1e3)),
                new Column("p99 ms", r -> fmt(r.p99Micros() / 1e3)),
                new Column("max ms", r -> fmt(r.maxMicros() / 1e3)), new Column("write amp", r -> amp(r.writeAmp())),
                new Column("disk MiB", r -> fmt(r.diskBytes() / 1048576.0)),
                new Column("CPU s/M " + what, r -> fmt(r.cpuSecPerMillionRows())),
                new Column("cores busy", r -> fmt(r.coresBusy())), new Column("peak heap MiB", r -> heap(r)),
                new Column("note", PhaseResult::note)));
        return c;
    }

    /**
     * Columns of the broadcast table, a row per write phase ({@code rows}) with the scan after it
     * from {@code all}: the scan's rate also as a ratio to RocksDB's after its rewrite.
     */
    private static List<Column> broadcastColumns(List<PhaseResult> rows, List<PhaseResult> all) {
        Function<PhaseResult, PhaseResult> scan = r -> after(all, r, RangeWorkload.SCAN);
        List<Column> c = leading(rows, new Column("variant", RangeWorkload::variant));
        c.addAll(List.of(new Column("rows", r -> count(r.rows())), new Column("write ms", r -> fmt(r.seconds() * 1e3)),
                new Column("rows/s written", r -> fmt(r.rowsPerSec())),
                new Column("scan s", r -> seconds(scan.apply(r))),
                new Column("scan rows/s", r -> rate(scan.apply(r))),
                ratio("scan ÷ RocksDB rewrite", rows, r -> rate(scan.apply(r), PhaseResult::rowsPerSec),
                        (r, o) -> o.engine().equals("rocksdb") && o.scale().equals(r.scale())
                                && RangeWorkload.variant(o).equals(RangeWorkload.REWRITE)),
                new Column("p50 ms", r -> fmt(r.p50Micros() / 1e3)), new Column("max ms", r -> fmt(r.maxMicros() / 1e3)),
                new Column("write amp", r -> amp(r.writeAmp())),
                new Column("disk MiB", r -> fmt(r.diskBytes() / 1048576.0)),
                new Column("peak heap MiB", r -> heap(r)), new Column("note", PhaseResult::note)));
        return c;
    }

    /**
     * Columns of the range-delete table, a row per call ({@code rows}) with the scan and the gets
     * after it from {@code all}, their rates also as ratios to RocksDB's.
     */
    private static List<Column> rangeDeleteColumns(List<PhaseResult> rows, List<PhaseResult> all) {
        Function<PhaseResult, PhaseResult> scan = r -> after(all, r, RangeWorkload.SCAN);
        Function<PhaseResult, PhaseResult> gets = r -> after(all, r, "-gets");
        List<Column> c = leading(rows, new Column("codec", PhaseResult::codec));
        c.addAll(List.of(new Column("rows deleted", r -> count(r.rows())),
                new Column("call ms", r -> fmt(r.seconds() * 1e3)),
                new Column("rows left", r -> scan.apply(r) == null ? "n/a" : count(scan.apply(r).rows())),
                new Column("scan s", r -> seconds(scan.apply(r))), new Column("scan rows/s", r -> rate(scan.apply(r))),
                ratio("scan ÷ RocksDB", rows, r -> rate(scan.apply(r), PhaseResult::rowsPerSec),
                        Report::sameAsRocksDb),
                new Column("gets/s", r -> rate(gets.apply(r))),
                ratio("gets ÷ RocksDB", rows, r -> rate(gets.apply(r), PhaseResult::rowsPerSec),
                        Report::sameAsRocksDb),
                new Column("get p50 us", r -> gets.apply(r) == null ? "n/a" : fmt(gets.apply(r).p50Micros())),
                new Column("get p99 us", r -> gets.apply(r) == null ? "n/a" : fmt(gets.apply(r).p99Micros())),
                new Column("write amp", r -> amp(r.writeAmp())),
                new Column("disk MiB", r -> fmt(r.diskBytes() / 1048576.0)), new Column("note", PhaseResult::note)));
        return c;
    }

    /** The phase of {@code all} named {@code r}'s phase and {@code suffix}, same engine and scale; or null. */
    private static PhaseResult after(List<PhaseResult> all, PhaseResult r, String suffix) {
        return all.stream().filter(o -> o.engine().equals(r.engine()) && o.scale().equals(r.scale())
                && o.phase().equals(r.phase() + suffix)).findFirst().orElse(null);
    }

    private static double rate(PhaseResult r, ToDoubleFunction<PhaseResult> f) {
        return r == null ? Double.NaN : f.applyAsDouble(r);
    }

    private static String rate(PhaseResult r) {
        return fmt(rate(r, PhaseResult::rowsPerSec));
    }

    private static String seconds(PhaseResult r) {
        return fmt(rate(r, PhaseResult::seconds));
    }

    private static List<Column> readColumns(List<PhaseResult> rows, String rate, boolean mbps) {
        List<Column> c = leading(rows, new Column("phase", PhaseResult::phase));
        c.addAll(List.of(new Column("requests", r -> count(r.requests())), new Column(rate, r -> fmt(r.rowsPerSec())),
                ratio("÷ RocksDB", rows, PhaseResult::rowsPerSec, Report::sameAsRocksDb)));
        if (mbps) {
            c.add(new Column("MB/s", r -> fmt(r.mbPerSec())));
        }
        c.addAll(List.of(new Column("p50 us", r -> fmt(r.p50Micros())), new Column("p99 us", r -> fmt(r.p99Micros())),
                new Column("p99.9 us", r -> fmt(r.p999Micros())),
                new Column("CPU s/M rows", r -> fmt(r.cpuSecPerMillionRows())),
                new Column("cores busy", r -> fmt(r.coresBusy())), new Column("peak heap MiB", r -> heap(r)),
                new Column("note", PhaseResult::note)));
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
                new Column("cores busy", r -> fmt(r.coresBusy())), new Column("peak heap MiB", r -> heap(r)),
                new Column("note", PhaseResult::note));
    }

    /**
     * A column of {@code f} of each row divided by {@code f} of the row of {@code rows} that
     * {@code base} picks for it, e.g. {@code 1.25x}; n/a when there is none.
     */
    private static Column ratio(String name, List<PhaseResult> rows, ToDoubleFunction<PhaseResult> f,
            BiPredicate<PhaseResult, PhaseResult> base) {
        return new Column(name, r -> rows.stream().filter(o -> base.test(r, o)).findFirst()
                .map(o -> f.applyAsDouble(r) / f.applyAsDouble(o))
                .filter(Double::isFinite)
                .map(x -> String.format(Locale.ROOT, "%.2fx", x))
                .orElse("n/a"));
    }

    /** Whether {@code o} is RocksDB's result of {@code r}'s phase and scale. */
    private static boolean sameAsRocksDb(PhaseResult r, PhaseResult o) {
        return o.engine().equals("rocksdb") && o.scale().equals(r.scale()) && o.phase().equals(r.phase());
    }

    private static String table(List<PhaseResult> rows, List<Column> cols) {
        if (rows.isEmpty()) {
            return "(no results)\n";
        }
        StringBuilder b = new StringBuilder("|");
        StringBuilder rule = new StringBuilder("|");
        for (Column c : cols) {
            b.append(' ').append(c.name()).append(" |");
            rule.append(List.of("engine", "phase", "variant", "codec", "scale", "note").contains(c.name()) ? "---|"
                    : "---:|");
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

    /** Bars of the overall and terminal rows/s per engine, for each scale of {@code rows}. */
    private static void rateBars(Path png, String title, String yLabel, List<PhaseResult> rows) throws IOException {
        List<String> scales = distinct(rows, PhaseResult::scale);
        List<String> groups = new ArrayList<>();
        List<ToDoubleFunction<PhaseResult>> figures = new ArrayList<>();
        for (String sc : scales) {
            String suffix = scales.size() > 1 ? " (" + sc + ")" : "";
            groups.add("overall" + suffix);
            figures.add(r -> r.scale().equals(sc) ? r.rowsPerSec() : Double.NaN);
            groups.add("terminal" + suffix);
            figures.add(r -> r.scale().equals(sc) ? r.terminalRowsPerSec() : Double.NaN);
        }
        bars(png, title, yLabel, rows, groups, figures);
    }

    /**
     * The variants among the scales of {@code rows} as series and chart name infixes: always the
     * default ({@code ""}), then e.g. {@code "-small"}.
     */
    private static List<String> variants(List<PhaseResult> rows) {
        List<String> out = new ArrayList<>(List.of(""));
        for (PhaseResult r : rows) {
            String v = Scale.variant(r.scale());
            if (!v.isEmpty() && !out.contains("-" + v)) {
                out.add("-" + v);
            }
        }
        return out;
    }

    /** A chart title's note on the variant infix {@code v}. */
    private static String cache(String v) {
        return v.isEmpty() ? "" : " (" + v.substring(1) + " cache)";
    }

    /** Bars of rows/s per phase and, when there are several, scale (groups) and engine (series). */
    private static void perPhaseBars(Path png, String title, String yLabel, List<PhaseResult> rows)
            throws IOException {
        boolean scales = distinct(rows, PhaseResult::scale).size() > 1;
        Function<PhaseResult, String> group = r -> scales ? r.phase() + " (" + r.scale() + ")" : r.phase();
        List<String> groups = distinct(rows, group);
        bars(png, title, yLabel, rows, groups, groups.stream()
                .<ToDoubleFunction<PhaseResult>>map(g -> r -> group.apply(r).equals(g) ? r.rowsPerSec() : Double.NaN)
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

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
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
