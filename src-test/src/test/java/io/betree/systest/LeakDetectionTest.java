package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No off-heap buffer is ever dropped without being released: {@link LeakWorkload} (every buffer
 * path, normal and exceptional) runs in a child JVM under {@link NettyLeaks}, with Netty's detection
 * at paranoid so that every buffer is tracked, and the test fails on any recorded leak. A control run
 * leaks a buffer on purpose, to prove the machinery would notice.
 */
class LeakDetectionTest {
    static final Duration TIMEOUT = Duration.ofMinutes(3);

    @TempDir
    Path work;

    @Test
    void workloadLeaksNoBuffers() throws Exception {
        NettyLeaks.Report report = NettyLeaks.run(LeakWorkload.class, work, TIMEOUT);
        System.out.println("leak check of LeakWorkload: " + report.result().elapsed().toMillis() + " ms, "
                + report.leaks().size() + " leak(s)\n" + report.result().stdout().lines()
                        .filter(l -> !l.startsWith("LEAK")).reduce("", (a, b) -> a + "  " + b + "\n"));
        NettyLeaks.assertNoLeaks(report);
        String out = report.result().stdout();
        assertTrue(out.contains("CRAFTED 4 "), "a malformed basement, leaf, internal node and message buffer should"
                + " each have been read\n" + out);
    }

    @Test
    void controlRunWithADeliberateLeakIsCaught() throws Exception {
        NettyLeaks.Report report = NettyLeaks.run(DeliberateLeak.class, work, TIMEOUT);
        assertFalse(report.leaks().isEmpty(), "a deliberately leaked buffer went unreported; the detector is not "
                + "working\n" + report.result().describe());
        assertTrue(report.leaks().get(0).contains("DeliberateLeak"),
                "the report should carry the allocation's access record:\n" + report.leaks().get(0));
    }

    /** Allocates a pooled direct buffer the way the engine does and drops it unreleased. */
    public static final class DeliberateLeak {
        private DeliberateLeak() {
        }

        public static void run(Path dir) {
            leak();
        }

        private static void leak() {
            ByteBuf buf = new PooledByteBufAllocator(true).directBuffer(1024, 1024);
            buf.writeLong(42); // an access record pointing here
        }
    }
}
