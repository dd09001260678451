package io.betree.internal.memory;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The C allocator's freed memory goes back to the OS: on Linux with glibc, releasing node memory
 * leads to trims without any JVM option, and a trim runs when asked.
 */
class NativeHeapTrimmerTest {

    private static boolean glibcLinux() {
        return System.getProperty("os.name").startsWith("Linux") && Files.exists(Path.of("/proc/self/status"))
                && !Files.exists(Path.of("/lib/ld-musl-x86_64.so.1")) && !Files.exists(Path.of("/lib/ld-musl-aarch64.so.1"));
    }

    @Test
    void aTrimRunsWithNoJvmOption() {
        assumeTrue(glibcLinux(), "malloc_trim is glibc's");
        assertTrue(NativeHeapTrimmer.trimNow(), "System.trim_native_heap through the platform MBean server");
    }

    @Test
    void releasingNodeMemoryLeadsToATrim() throws Exception {
        assumeTrue(glibcLinux(), "malloc_trim is glibc's");
        NodeMemory memory = new NodeMemory();
        long before = NativeHeapTrimmer.trims();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (NativeHeapTrimmer.trims() == before && System.nanoTime() < deadline) {
            List<ByteBuf> held = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                held.add(memory.allocate(1 << 20));
            }
            held.forEach(memory::release);
            Thread.sleep(100);
        }
        assertTrue(NativeHeapTrimmer.trims() > before, "a trim after 64 MiB released again and again");
    }
}
