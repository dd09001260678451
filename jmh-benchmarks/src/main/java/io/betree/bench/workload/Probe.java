package io.betree.bench.workload;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Process-wide counters taken around a measured phase: wall time, CPU time of every thread of the
 * process (the engines' native background threads included), bytes the process sent to storage
 * ({@code write_bytes - cancelled_write_bytes} of {@code /proc/self/io}, which counts page-cache
 * writes and memory-mapped writes when the page is dirtied) and the peak Java heap.
 */
public final class Probe {
    private final long startNanos;
    private final long startCpu;
    private final long startWritten;

    private Probe() {
        resetHeapPeaks();
        this.startWritten = storageBytesWritten();
        this.startCpu = processCpuNanos();
        this.startNanos = System.nanoTime();
    }

    /** Starts measuring now (and resets the heap peaks). */
    public static Probe start() {
        return new Probe();
    }

    /** Wall seconds since the start. */
    public double seconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** Nanoseconds since the start. */
    public long elapsedNanos() {
        return System.nanoTime() - startNanos;
    }

    /** CPU seconds of the whole process since the start, or NaN where the JVM does not tell. */
    public double cpuSeconds() {
        long now = processCpuNanos();
        return now < 0 || startCpu < 0 ? Double.NaN : (now - startCpu) / 1e9;
    }

    /** Bytes the process sent to storage since the start, or -1 where /proc/self/io is unreadable. */
    public long bytesWritten() {
        long now = storageBytesWritten();
        return now < 0 || startWritten < 0 ? -1 : now - startWritten;
    }

    /** Peak Java heap since the start: the sum of the heap pools' peaks (an upper bound). */
    public long peakHeapBytes() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    private static void resetHeapPeaks() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                pool.resetPeakUsage();
            }
        }
    }

    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }

    /** {@code write_bytes - cancelled_write_bytes} of this process, or -1 when unavailable. */
    static long storageBytesWritten() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/io"));
            long written = -1;
            long cancelled = 0;
            for (String line : lines) {
                if (line.startsWith("write_bytes:")) {
                    written = Long.parseLong(line.substring(12).trim());
                } else if (line.startsWith("cancelled_write_bytes:")) {
                    cancelled = Long.parseLong(line.substring(22).trim());
                }
            }
            return written < 0 ? -1 : written - cancelled;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
