package io.betree.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.bench.report.Report;
import io.betree.bench.workload.BenchContext;
import io.betree.bench.workload.CompressionWorkload;
import io.betree.bench.workload.FifoWorkload;
import io.betree.bench.workload.InsertWorkload;
import io.betree.bench.workload.PhaseResult;
import io.betree.bench.workload.RangeWorkload;
import io.betree.bench.workload.ReadWorkload;
import io.betree.bench.workload.Results;
import io.betree.bench.workload.Scale;
import io.betree.bench.workload.TimeSeriesWorkload;
import io.betree.bench.workload.UpdateWorkload;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The benchmark suite at the {@code tiny} scale, through the adapters of all three engines, with
 * sanity checks on every figure, then the report (Markdown and PNG charts) from those results. The
 * workloads themselves fail on a wrong answer (a missing row, a wrong queue head, a short scan, a
 * lost time-series row). iiBench and FIFO also run in a small-cache variant of {@code tiny}, on
 * betree and RocksDB, so that the report shows both variants side by side.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SmokeSuiteTest {
    private static final Path RESULTS = Path.of("target/smoke-junit/results");
    private static final Path DATA = Path.of("target/smoke-junit/data");
    private static final Path DROPCACHE = Path.of("../../shared/tools/dropcache");
    private static final Map<String, List<String>> CODECS = Map.of("betree", List.of("lz4", "zstd", "xz"),
            "rocksdb", List.of("lz4", "zstd"), "lmdb", List.of("none"));

    @BeforeAll
    static void clean() {
        BenchContext.deleteTree(RESULTS);
        BenchContext.deleteTree(DATA);
    }

    private static BenchContext context(String engine, String codec) {
        return context(engine, codec, Scale.named("tiny"));
    }

    private static BenchContext context(String engine, String codec, Scale scale) {
        return BenchContext.of(engine, codec, scale, false, new Results(RESULTS), DATA,
                Files.isRegularFile(DROPCACHE) ? DROPCACHE : null);
    }

    /** {@code tiny} named as a small-cache variant (its 32 MiB are betree's smallest cache already). */
    private static Scale tinySmall() {
        Scale t = Scale.named("tiny");
        return new Scale("tiny-small", 32L << 20, t.insertRows(), t.insertMaxSeconds(), t.fifoQueueRows(),
                t.fifoChurnRows(), t.fifoMaxSeconds(), t.fifoHeadReads(), t.lookups(), t.shortScans(), t.mediumScans(),
                t.compressBytes(), t.compressMaxSeconds(), t.timeSeriesSteps(), t.timeSeriesMaxSeconds(), t.counters(),
                t.counterIncrements(), t.updateRows(), t.updates(), t.updateBatch(), t.updateMaxSeconds(),
                t.rangeRows(), t.rangeGets());
    }

    @Order(1)
    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb", "lmdb"})
    void everyWorkloadRunsAndAddsUp(String engine) {
        BenchContext ctx = context(engine, "zstd");
        long rows = ctx.scale().insertRows();

        PhaseResult insert = InsertWorkload.run(ctx);
        assertEquals(rows, insert.rows());
        assertEquals(rows / 1000, insert.requests());
        assertSane(insert);
        assertTrue(insert.terminalRowsPerSec() > 0, insert.toString());
        assertTrue(Files.exists(ctx.results().series("insert-" + engine)));
        assertEquals(engine.equals("betree"), insert.note().contains("writers held back "),
                "only betree reports back-pressure: " + insert.note());

        List<PhaseResult> reads = ReadWorkload.run(ctx);
        assertEquals(2 * ReadWorkload.KINDS.size(), reads.size());
        for (PhaseResult r : reads) {
            assertSane(r);
            if (r.phase().startsWith("scan-full")) {
                assertEquals(rows, r.rows(), r.phase());
            } else if (r.phase().startsWith("scan-100-")) {
                assertEquals(100 * ctx.scale().shortScans(), r.rows(), r.phase());
            }
        }

        PhaseResult[] fifo = FifoWorkload.run(ctx);
        assertSane(fifo[0]);
        assertEquals(ctx.scale().fifoChurnRows(), fifo[0].rows());
        assertTrue(fifo[1].requests() >= ctx.scale().fifoHeadReads(), fifo[1].toString());
        Matcher m = Pattern.compile("disk after fill ([0-9.]+) MiB, max ([0-9.]+) MiB").matcher(fifo[0].note());
        assertTrue(m.find(), fifo[0].note());
        double afterFill = Double.parseDouble(m.group(1));
        double max = Double.parseDouble(m.group(2));
        assertTrue(max <= 3 * afterFill + 16, "queue's disk size grew from " + afterFill + " to " + max + " MiB");

        for (String codec : CODECS.get(engine)) {
            PhaseResult c = CompressionWorkload.run(context(engine, codec));
            assertSane(c);
            assertEquals(codec, c.codec());
            if (!codec.equals("none")) {
                assertTrue(c.spaceAmp() < 1, engine + " " + codec + " did not compress log rows: " + c.spaceAmp());
            }
        }
    }

    @Order(1)
    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb", "lmdb"})
    void timeSeriesWithOneAndSeveralWriters(String engine) {
        BenchContext ctx = context(engine, "zstd");
        long steps = ctx.scale().timeSeriesSteps();
        for (int threads : new int[] {1, 4}) {
            PhaseResult r = TimeSeriesWorkload.run(ctx, threads);
            assertEquals("timeseries", r.workload());
            assertEquals(threads, TimeSeriesWorkload.threads(r));
            assertEquals(steps, r.requests());
            assertEquals(steps * TimeSeriesWorkload.SENSORS, r.rows());
            assertSane(r);
            assertTrue(r.terminalRowsPerSec() > 0, r.toString());
            double rowBytes = (double) r.logicalBytes() / r.rows();
            assertTrue(rowBytes >= 12 + 16 && rowBytes <= 12 + 100, r.toString());
        }
    }

    /**
     * The update benchmark's phases: each variant the engine has, with every increment and update
     * it planned (the workload itself checks the counters and rows); none on LMDB.
     */
    @Order(1)
    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb", "lmdb"})
    void updateFunctionPhasesRunWhereSupported(String engine) {
        BenchContext ctx = context(engine, "lz4");
        Scale sc = ctx.scale();
        List<PhaseResult> all = new java.util.ArrayList<>();
        for (String variant : List.of(UpdateWorkload.BLIND, UpdateWorkload.GET_PUT)) {
            UpdateWorkload.counters(ctx, 4, variant).ifPresent(all::add);
            UpdateWorkload.updateNonIndex(ctx, 4, variant).ifPresent(all::add);
        }
        List<String> expected = switch (engine) {
            case "betree" -> List.of("counters-update-4", "update-non-index-update-4", "counters-get-put-4",
                    "update-non-index-get-put-4");
            case "rocksdb" -> List.of("counters-merge-4", "update-non-index-get-put-4");
            default -> List.of();
        };
        assertEquals(expected, all.stream().map(PhaseResult::phase).toList());
        for (PhaseResult r : all) {
            assertSane(r);
            assertEquals(4, UpdateWorkload.threads(r));
            assertTrue(List.of("update", "merge", "get-put").contains(UpdateWorkload.variant(r)), r.phase());
            long planned = r.workload().equals(UpdateWorkload.COUNTERS) ? sc.counterIncrements() : sc.updates();
            assertEquals(planned, r.rows(), r.toString());
            assertEquals(planned / sc.updateBatch(), r.requests(), r.toString());
            assertTrue(r.isWrite(), r.toString());
        }

        // The broadcast and the range delete: each variant the engine has, every row covered (the
        // workload itself checks every row scanned and the gets in the deleted half).
        List<PhaseResult> ranges = new java.util.ArrayList<>();
        for (String variant : List.of(UpdateWorkload.BLIND, UpdateWorkload.GET_PUT)) {
            ranges.addAll(RangeWorkload.broadcast(ctx, variant));
            ranges.addAll(RangeWorkload.rangeDelete(ctx, variant));
        }
        List<String> expectedRanges = switch (engine) {
            case "betree" -> List.of("broadcast-update-all", "broadcast-update-all-scan", "range-delete",
                    "range-delete-scan", "range-delete-gets", "broadcast-rewrite", "broadcast-rewrite-scan");
            case "rocksdb" -> List.of("range-delete", "range-delete-scan", "range-delete-gets", "broadcast-rewrite",
                    "broadcast-rewrite-scan");
            default -> List.of();
        };
        assertEquals(expectedRanges, ranges.stream().map(PhaseResult::phase).toList());
        long rows = sc.rangeRows();
        for (PhaseResult r : ranges) {
            assertSane(r);
            long expectedRows = switch (r.phase()) {
                case "range-delete", "range-delete-scan" -> rows / 2;
                case "range-delete-gets" -> sc.rangeGets();
                default -> rows;
            };
            assertEquals(expectedRows, r.rows(), r.toString());
            long requests = r.phase().equals("broadcast-rewrite")
                    ? (rows + RangeWorkload.REWRITE_BATCH - 1) / RangeWorkload.REWRITE_BATCH
                    : r.phase().equals("range-delete-gets") ? sc.rangeGets() : 1;
            assertEquals(requests, r.requests(), r.toString());
            assertEquals(r.phase().equals("range-delete") || r.phase().startsWith("broadcast-")
                    && !r.phase().endsWith("-scan"), r.isWrite(), r.toString());
        }
    }

    /**
     * With {@code bench.batchSeries} set, a time-series run writes one line per transaction: when
     * it ended and how long it took. Its results go to a directory of their own, out of the report.
     */
    @Order(1)
    @Test
    void timeSeriesWritesEachTransactionToTheBatchSeriesWhenAsked() throws IOException {
        Path series = DATA.resolve("batch-series");
        BenchContext ctx = BenchContext.of("betree", "lz4", Scale.named("tiny"), false,
                new Results(RESULTS.resolveSibling("batch-series-results")), DATA, null);
        System.setProperty("bench.batchSeries", series.toString());
        PhaseResult r;
        try {
            r = TimeSeriesWorkload.run(ctx, 2);
        } finally {
            System.clearProperty("bench.batchSeries");
        }
        List<String> lines = Files.readAllLines(series.resolve("timeseries-2-betree.txt"));
        assertEquals(r.requests(), lines.size());
        for (String line : lines) {
            String[] f = line.split(" ");
            assertEquals(2, f.length, line);
            double endSeconds = Double.parseDouble(f[0]);
            double millis = Double.parseDouble(f[1]);
            assertTrue(endSeconds > 0 && endSeconds <= r.seconds(), line + " in a run of " + r.seconds() + " s");
            assertTrue(millis > 0 && millis <= endSeconds * 1000 + 0.2, line); // both rounded
        }
    }

    @Order(1)
    @ParameterizedTest
    @ValueSource(strings = {"betree", "rocksdb"})
    void smallCacheVariant(String engine) {
        Scale full = Scale.named("full-small");
        assertEquals(64L << 20, full.budgetBytes());
        assertEquals(28_000_000, full.insertRows());
        assertEquals(28_000_000, full.fifoQueueRows());
        assertEquals("small", full.variant());
        assertEquals("", Scale.named("full").variant());
        BenchContext ctx = context(engine, "zstd", tinySmall());
        PhaseResult insert = InsertWorkload.run(ctx);
        assertEquals("tiny-small", insert.scale());
        assertSane(insert);
        assertTrue(Files.exists(ctx.results().series("insert-small-" + engine)));
        assertSane(FifoWorkload.run(ctx)[0]);
        assertTrue(Files.exists(ctx.results().series("fifo-small-" + engine)));
    }

    @Test
    void summaryLinesWithoutTheMaxLatencyStillParse() {
        PhaseResult r = new PhaseResult("full", "insert", "insert", "betree", "zstd", 3, 3000, 1.5, 276_000, 1_000_000,
                500_000, 276_000, 1.2, 1 << 20, 900, 1_800, 2_000, 2_500, 2_100, "");
        List<String> fields = new java.util.ArrayList<>(List.of(r.toTsv().split("\t", -1)));
        assertEquals(r, PhaseResult.fromTsv(String.join("\t", fields)));
        fields.remove(PhaseResult.COLUMNS.indexOf("max_us"));
        PhaseResult old = PhaseResult.fromTsv(String.join("\t", fields));
        assertTrue(Double.isNaN(old.maxMicros()));
        assertEquals(r.p999Micros(), old.p999Micros());
        assertEquals(r.terminalRowsPerSec(), old.terminalRowsPerSec());
        assertEquals(0.8, old.coresBusy(), 1e-9);
    }

    private static void assertSane(PhaseResult r) {
        assertTrue(r.seconds() > 0 && r.rowsPerSec() > 0, r.toString());
        assertTrue(r.p50Micros() > 0 && r.p50Micros() <= r.p99Micros() && r.p99Micros() <= r.p999Micros()
                && r.p999Micros() <= r.maxMicros(), r.toString());
        assertTrue(r.coresBusy() >= 0, r.toString());
        assertTrue(r.diskBytes() > 0 && r.spaceAmp() > 0, r.toString());
        assertTrue(r.peakHeapBytes() > 0, r.toString());
        if (r.isWrite() && r.storageWritten() >= 0) {
            assertTrue(r.writeAmp() >= 0, r.toString());
        }
    }

    @Order(2)
    @Test
    void reportHasTablesAndCharts() throws IOException {
        List<PhaseResult> all = Results.read(RESULTS);
        assertFalse(all.isEmpty());
        Path md = Report.write(RESULTS, "JUnit smoke (tiny scale)");
        String text = Files.readString(md);
        for (String engine : CODECS.keySet()) {
            assertTrue(text.contains(engine), engine);
        }
        for (String section : List.of("Insert", "Delete-FIFO", "Time series", "Point lookups", "Range scans",
                "Compression", "Update functions (issue 11)", "Broadcast update and range delete (issue 11)")) {
            assertTrue(text.contains(section), section);
        }
        for (String column : List.of("| scale |", "| terminal ÷ RocksDB |", "| cores busy |", "| max ms |",
                "| rows/s ÷ 1 thread |", "| rows/s ÷ RocksDB |", "| ÷ RocksDB merge |", "| ÷ get-put |",
                "| scan ÷ RocksDB rewrite |", "| gets ÷ RocksDB |", "| betree | update-all |")) {
            assertTrue(text.contains(column), column);
        }
        assertTrue(text.contains("| betree | zstd | tiny-small |"), "small-cache insert row");
        assertTrue(text.contains("| 1.00x |"), "RocksDB's own ratio");
        assertTrue(Files.exists(RESULTS.resolve("charts/insert-rate-small.png")));
        assertTrue(Files.exists(RESULTS.resolve("charts/timeseries.png")));
        assertTrue(Files.exists(RESULTS.resolve("charts/updates.png")));
        try (Stream<Path> s = Files.list(RESULTS.resolve("charts"))) {
            List<Path> pngs = s.filter(p -> p.toString().endsWith(".png")).toList();
            assertTrue(pngs.size() >= 6, pngs.toString());
            for (Path p : pngs) {
                BufferedImage img = ImageIO.read(p.toFile());
                assertNotNull(img, p.toString());
                assertTrue(img.getWidth() > 100 && img.getHeight() > 100, p.toString());
            }
        }
    }
}
