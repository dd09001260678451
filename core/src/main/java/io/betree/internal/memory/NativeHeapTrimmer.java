package io.betree.internal.memory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Gives the memory the C allocator keeps after a free back to the operating system, so that the
 * process's resident size follows the node memory it holds rather than the most it ever held.
 *
 * <p>Node memory is direct memory, allocated and freed through glibc's malloc on Linux, which
 * keeps freed blocks in its arenas for reuse; blocks of many sizes (pool chunks and larger
 * buffers) leave holes it cannot hand back. In a 30 M-row iiBench with a 128 MiB cache the
 * resident size grew from 312 to 507 MiB while the direct memory in use stayed at 140-160 MiB,
 * and the process was killed at its 512 MiB cap; {@code malloc_trim} returned 136 MiB at once.
 * The JVM's diagnostic command {@code System.trim_native_heap} calls it (JDK 17.0.9 and later),
 * and the platform MBean server runs the command with no JVM option.
 *
 * <p>A trim holds each arena's lock while it hands pages back (75-200 ms for 100 MiB or so), so
 * it runs only when the memory kept has grown: after every {@link #CHECK_EVERY_BYTES} of node
 * memory released (at most once per {@link #MIN_INTERVAL_NANOS}) a thread of its own compares
 * the resident size, less the Java heap and the node pool, with the same figure after the last
 * trim, and trims once it has grown by a sixteenth of the node memory in use (at least
 * {@link #MIN_KEPT_BYTES}). Where the command does not exist or fails (another C library, an
 * older JDK, no {@code /proc}), trimming stops for the life of the process. Thread-safe.
 */
public final class NativeHeapTrimmer {
    /** Node memory released between two looks at the resident size. */
    static final long CHECK_EVERY_BYTES = 8L << 20;
    /** Looks at most this often. */
    static final long MIN_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** Memory kept by the C allocator that never warrants a trim. */
    static final long MIN_KEPT_BYTES = 4L << 20;

    private static final AtomicLong RELEASED = new AtomicLong();
    private static final AtomicBoolean QUEUED = new AtomicBoolean();
    private static final AtomicLong TRIMS = new AtomicLong();
    private static final AtomicLong TRIM_NANOS = new AtomicLong();
    private static volatile boolean available = true;
    private static volatile long lastCheckNanos = System.nanoTime() - MIN_INTERVAL_NANOS;
    /** Resident bytes beyond the heap and the pool just after the last trim (or the first look). */
    private static long baseline = Long.MIN_VALUE;
    private static final ThreadPoolExecutor THREAD = executor();

    private NativeHeapTrimmer() {
    }

    private static ThreadPoolExecutor executor() {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> EngineThreads.newDaemon(r, "betree-heap-trim"));
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /** Notes {@code bytes} of node memory released; queues a look once enough have been. */
    static void released(long bytes) {
        if (available && RELEASED.addAndGet(bytes) >= CHECK_EVERY_BYTES && QUEUED.compareAndSet(false, true)) {
            THREAD.execute(NativeHeapTrimmer::checkWhenDue);
        }
    }

    /** Trims done so far in this process. */
    public static long trims() {
        return TRIMS.get();
    }

    /** Time spent in trims so far in this process, in nanoseconds. */
    public static long trimNanos() {
        return TRIM_NANOS.get();
    }

    private static void checkWhenDue() {
        try {
            long wait = lastCheckNanos + MIN_INTERVAL_NANOS - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            RELEASED.set(0);
            long kept = keptBeyondHeapAndPool();
            if (kept == Long.MIN_VALUE) {
                available = false;
            } else if (baseline == Long.MIN_VALUE) {
                baseline = kept;
            } else if (kept - baseline >= Math.max(MIN_KEPT_BYTES, NodeMemory.allUsed() / 16) && trimNow()) {
                baseline = keptBeyondHeapAndPool();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lastCheckNanos = System.nanoTime();
            QUEUED.set(false);
        }
    }

    /**
     * Resident bytes less the Java heap's committed bytes and the node pool's (negative while heap
     * pages are committed but not yet touched); {@code Long.MIN_VALUE} without {@code /proc}.
     */
    private static long keptBeyondHeapAndPool() {
        long rss = residentBytes();
        return rss < 0 ? Long.MIN_VALUE : rss - Runtime.getRuntime().totalMemory() - NodeMemory.poolBytes();
    }

    /** The process's resident size ({@code VmRSS}), or -1 where {@code /proc} does not tell. */
    public static long residentBytes() {
        return statusBytes("VmRSS:");
    }

    /** The process's peak resident size ({@code VmHWM}), or -1 where {@code /proc} does not tell. */
    public static long peakResidentBytes() {
        return statusBytes("VmHWM:");
    }

    /** A size in {@code /proc/self/status} (given there in kB), or -1. */
    private static long statusBytes(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not Linux.
        }
        return -1;
    }

    /**
     * Runs one trim now on the calling thread; returns false (and stops further trims) if this
     * JVM or C library cannot.
     */
    static boolean trimNow() {
        if (!available) {
            return false;
        }
        long start = System.nanoTime();
        try {
            Object answer = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "systemTrimNativeHeap",
                    new Object[] {null}, new String[] {String[].class.getName()});
            // Elsewhere than glibc the command answers that it is not supported, and does nothing.
            if (answer instanceof String s && s.contains("RSS")) {
                TRIMS.incrementAndGet();
                TRIM_NANOS.addAndGet(System.nanoTime() - start);
                return true;
            }
        } catch (JMException | RuntimeException e) {
            // No such command before JDK 17.0.9, or no platform MBean server: trimming stops.
        }
        available = false;
        return false;
    }
}
