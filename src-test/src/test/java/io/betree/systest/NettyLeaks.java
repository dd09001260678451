package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Netty leak detection that a test can assert on instead of a log line to grep for.
 *
 * <p>{@link #install()} registers a {@link ResourceLeakDetectorFactory} whose detectors record every
 * leak they report. Netty asks the factory for the {@code ByteBuf} detector once, when
 * {@code AbstractByteBuf} is initialized, so the factory must be installed before any buffer class is
 * used in the JVM: the reliable way is a fresh JVM whose {@code main} installs it first thing. That is
 * what {@link #run} does: it starts {@link Child} in a child JVM with paranoid leak detection, which
 * installs the factory, runs a workload's {@code static void run(Path)}, then provokes detection
 * (garbage collection, then more tracked allocations, which is when Netty polls for collected
 * buffers that were never released) and prints what was found.
 */
final class NettyLeaks {
    /** Leak reports recorded in this JVM. */
    private static final List<String> LEAKS = Collections.synchronizedList(new ArrayList<>());
    /** Resource types for which a recording detector was created. */
    private static final Set<String> DETECTORS = ConcurrentHashMap.newKeySet();

    private NettyLeaks() {
    }

    /** A detector that records reports (and always reports, whatever the logger's level). */
    static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<?> resourceType, int samplingInterval) {
            super(resourceType, samplingInterval);
        }

        @Override
        protected boolean needReport() {
            return true;
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected."
                    + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected "
                    + "(no access records)");
        }
    }

    /** Creates {@link RecordingDetector}s. */
    static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                long maxActive) {
            return newResourceLeakDetector(resource, samplingInterval);
        }

        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval) {
            DETECTORS.add(resource.getName());
            return new RecordingDetector<>(resource, samplingInterval);
        }
    }

    /**
     * Installs the recording factory and turns detection up to paranoid (every buffer tracked).
     *
     * @throws IllegalStateException if Netty's buffer classes were initialized before, so that the
     *     ByteBuf detector is Netty's own and leaks would go unrecorded
     */
    static void install() {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        Unpooled.buffer(1).release(); // initializes AbstractByteBuf, which asks the factory for its detector
        if (!DETECTORS.contains(ByteBuf.class.getName())) {
            throw new IllegalStateException("Netty's ByteBuf leak detector was created before NettyLeaks.install(); "
                    + "call install() first thing in main, before anything touches a ByteBuf");
        }
    }

    /**
     * Makes Netty report buffers that became unreachable without being released: collects garbage,
     * then allocates tracked buffers (each tracked allocation polls the detector's reference queue),
     * a few rounds. Returns every report recorded so far.
     */
    static List<String> detect() throws InterruptedException {
        for (int round = 0; round < 5; round++) {
            System.gc();
            System.runFinalization();
            Thread.sleep(100);
            for (int i = 0; i < 100; i++) {
                PooledByteBufAllocator.DEFAULT.directBuffer(64).release();
                Unpooled.directBuffer(64).release();
            }
        }
        synchronized (LEAKS) {
            return new ArrayList<>(LEAKS);
        }
    }

    /** What a child JVM run found. */
    record Report(ChildJvm.Result result, List<String> leaks) {
    }

    /**
     * Runs {@code workload}'s {@code public static void run(Path)} in a child JVM with the recording
     * factory installed and paranoid detection, and returns the leaks it reported. Fails the calling
     * test if the child does not finish normally.
     */
    static Report run(Class<?> workload, Path dir, Duration timeout) throws Exception {
        ChildJvm.Result r = ChildJvm.run(Child.class,
                List.of("-Xmx256m", "-XX:MaxDirectMemorySize=512m", "-Dio.netty.leakDetection.level=paranoid",
                        "-Dio.netty.leakDetection.targetRecords=8"),
                List.of(workload.getName(), dir.toString()), dir, timeout);
        assertFalse(r.timedOut(), "leak check of " + workload.getSimpleName() + " timed out\n" + r.describe());
        assertEquals(0, r.exitCode(), r.describe());
        assertTrue(r.stdout().contains("LEAK_CHECK_DONE"), r.describe());
        List<String> leaks = new ArrayList<>();
        StringBuilder current = null;
        for (String line : r.stdout().split("\\R")) {
            if (line.startsWith("LEAK: ")) {
                if (current != null) {
                    leaks.add(current.toString());
                }
                current = new StringBuilder(line);
            } else if (line.equals("LEAK_CHECK_DONE") || line.startsWith("LEAKS ")) {
                if (current != null) {
                    leaks.add(current.toString());
                    current = null;
                }
            } else if (current != null) {
                current.append('\n').append(line);
            }
        }
        return new Report(r, leaks);
    }

    /** Asserts that the child run reported no leak, showing the first reports' access records if it did. */
    static void assertNoLeaks(Report report) {
        if (!report.leaks().isEmpty()) {
            throw new AssertionError(report.leaks().size() + " ByteBuf leak(s) reported; first:\n"
                    + String.join("\n\n", report.leaks().subList(0, Math.min(3, report.leaks().size())))
                    + "\n--- child stdout ---\n" + report.result().stdout());
        }
    }

    /**
     * Child-JVM entry point: {@code args[0]} a workload class with {@code public static void run(Path)},
     * {@code args[1]} a directory for it. Installs the factory before anything else, runs the workload,
     * detects, and prints each leak ({@code LEAK: ...}), {@code LEAKS n} and {@code LEAK_CHECK_DONE}.
     */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            install();
            Method run = Class.forName(args[0]).getMethod("run", Path.class);
            run.invoke(null, Path.of(args[1]));
            List<String> leaks = detect();
            for (String leak : leaks) {
                System.out.println(leak);
            }
            System.out.println("LEAKS " + leaks.size());
            System.out.println("LEAK_CHECK_DONE");
        }
    }
}
