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
import io.betree.bench.workload.ReadWorkload;
import io.betree.bench.workload.Results;
import io.betree.bench.workload.Scale;
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
 * workloads themselves fail on a wrong answer (a missing row, a wrong queue head, a short scan).
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
        return BenchContext.of(engine, codec, Scale.named("tiny"), false, new Results(RESULTS), DATA,
                Files.isRegularFile(DROPCACHE) ? DROPCACHE : null);
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

    private static void assertSane(PhaseResult r) {
        assertTrue(r.seconds() > 0 && r.rowsPerSec() > 0, r.toString());
        assertTrue(r.p50Micros() > 0 && r.p50Micros() <= r.p99Micros() && r.p99Micros() <= r.p999Micros(),
                r.toString());
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
        for (String section : List.of("Insert", "Delete-FIFO", "Point lookups", "Range scans", "Compression")) {
            assertTrue(text.contains(section), section);
        }
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
