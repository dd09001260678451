package io.betree.bench.workload;

import io.betree.Codec;
import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Everything a workload needs besides the engine's code: which engine and codec, the scale, the
 * durability, where results and data go, and how to drop a directory from the OS page cache.
 *
 * <p>System properties (set by run.sh; the JUnit smoke test passes the values directly):
 * {@code bench.results} (results directory), {@code bench.data} (data directory), {@code bench.sync}
 * (durable commits), {@code bench.dropcache} (path of the shared {@code dropcache} tool).
 *
 * @param engine engine name
 * @param codec codec the engine will use (already mapped to {@link Codec#NONE} for LMDB)
 * @param scale the scale
 * @param sync whether commits are durable
 * @param results where figures go
 * @param dataDir under which each engine's stores are created
 * @param dropCacheTool the dropcache tool, or null when absent
 */
public record BenchContext(String engine, Codec codec, Scale scale, boolean sync, Results results, Path dataDir,
        Path dropCacheTool) {

    /** A context from the {@code bench.*} system properties. */
    public static BenchContext fromSystemProperties(String engine, String codec, String scale) {
        Path results = Path.of(System.getProperty("bench.results", "target/bench-results"));
        Path data = Path.of(System.getProperty("bench.data", "target/bench-data"));
        String tool = System.getProperty("bench.dropcache", "");
        return of(engine, codec, Scale.named(scale), Boolean.getBoolean("bench.sync"), new Results(results), data,
                tool.isEmpty() ? null : Path.of(tool));
    }

    /** A context whose codec falls back to {@link Codec#NONE} where the engine cannot compress. */
    public static BenchContext of(String engine, String codec, Scale scale, boolean sync, Results results,
            Path dataDir, Path dropCacheTool) {
        Codec c = Codec.byName(codec);
        if (!EngineAdapter.create(engine).supports(c)) {
            c = Codec.NONE;
        }
        return new BenchContext(engine, c, scale, sync, results, dataDir.toAbsolutePath(), dropCacheTool);
    }

    /** A new, closed adapter of the engine. */
    public EngineAdapter adapter() {
        return EngineAdapter.create(engine);
    }

    /** A new adapter of the engine, open on an empty store in {@code dir} (whatever was there is deleted). */
    public EngineAdapter openFresh(Path dir) {
        deleteTree(dir);
        EngineAdapter e = adapter();
        e.open(dir, settings());
        return e;
    }

    /** The engine settings: the scale's budget, the codec, the durability. */
    public EngineSettings settings() {
        return new EngineSettings(scale.budgetBytes(), codec, sync);
    }

    /**
     * The name of this engine's series of {@code workload}: {@code <workload>-<engine>}, with the
     * scale's variant in between for a small-cache preset ({@code insert-small-rocksdb}).
     */
    public String seriesName(String workload) {
        String variant = scale.variant();
        return workload + "-" + (variant.isEmpty() ? "" : variant + "-") + engine;
    }

    /** The directory of this engine's store for {@code dataset}. */
    public Path storeDir(String dataset) {
        return dataDir.resolve(engine).resolve(dataset);
    }

    /**
     * Evicts {@code dir}'s files from the OS page cache with the dropcache tool.
     *
     * @return false when no tool is configured (the OS cache then stays warm)
     */
    public boolean dropCache(Path dir) {
        if (dropCacheTool == null || !Files.isRegularFile(dropCacheTool)) {
            return false;
        }
        try {
            Process p = new ProcessBuilder(dropCacheTool.toString(), dir.toString()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Deletes {@code dir} and everything under it. */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
