package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.EnvironmentOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The smallest cache the environment accepts, with the default index options, over far more data
 * than it holds: the node size adapts to the cache, and a child JVM ({@link OffHeapWorkload}, in a
 * process of its own so that no other test's memory counts against the tiny budget) writes random
 * rows, checks a sample with gets and a miss, and counts them all with a scan.
 */
class SmallBudgetTest {
    private static final long ROWS = 300_000;
    private static final Duration TIMEOUT = Duration.ofMinutes(4);

    @TempDir
    Path work;

    @Test
    void theSmallestCacheWorksWithTheDefaultIndexOptions() throws Exception {
        long cache = EnvironmentOptions.MIN_CACHE_BYTES;
        ChildJvm.Result r = ChildJvm.run(OffHeapWorkload.class, List.of("-Xmx64m"),
                List.of(work.resolve("env").toString(), "random", Long.toString(ROWS), Long.toString(cache)), work,
                TIMEOUT);
        System.out.println("SmallBudgetTest: " + (cache >> 20) + " MiB cache, " + ROWS + " random rows: exit "
                + r.exitCode() + " in " + r.elapsed().toMillis() + " ms; written in " + r.field("WRITE_SECONDS")
                + " s, scanned in " + r.field("SCAN_SECONDS") + " s, off-heap at end " + r.field("OFF_HEAP_BYTES")
                + " bytes, cache " + r.field("CACHE"));
        assertFalse(r.timedOut(), "the workload did not finish in " + TIMEOUT + "\n" + r.describe());
        assertEquals(0, r.exitCode(), r.describe());
        assertEquals(Long.toString(ROWS), r.field("ROWS_WRITTEN"), r.describe());
        assertEquals(Long.toString(ROWS), r.field("ROWS_SCANNED"), "rows counted by a full scan\n" + r.describe());
        assertEquals("10001 of 10001", r.field("SAMPLE_OK"), "sampled gets\n" + r.describe());
        long offHeap = Long.parseLong(r.field("OFF_HEAP_BYTES"));
        assertTrue(offHeap <= cache + cache / 4, "off-heap bytes " + offHeap + " at the end, over the "
                + (cache >> 20) + " MiB budget and its headroom\n" + r.describe());
    }
}
