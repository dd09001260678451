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
            // 96 MiB in pool chunks made on this thread, then every other buffer freed first: the
            // chunks go back to the C allocator, which keeps them, and the trimmer sees it.
            List<ByteBuf> held = new ArrayList<>();
            for (int i = 0; i < 1536; i++) {
                held.add(memory.allocate(64 << 10));
            }
            for (int i = 0; i < held.size(); i += 2) {
                memory.release(held.get(i));
            }
            for (int i = 1; i < held.size(); i += 2) {
                memory.release(held.get(i));
            }
            Thread.sleep(200);
        }
        assertTrue(NativeHeapTrimmer.trims() > before, "a trim after 96 MiB of chunks freed again and again");
    }
}
