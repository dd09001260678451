package io.betree.bench.workload;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a run's figures go: {@code summary.tsv} (one {@link PhaseResult} per line, appended by every
 * benchmark JVM of the run) and {@code series/*.csv} (time series) under one results directory. The
 * results of the current JVM are also kept in memory for the JMH profiler.
 */
public final class Results {
    /** File name of the summary table. */
    public static final String SUMMARY = "summary.tsv";
    private static final List<PhaseResult> RECENT = new ArrayList<>();

    private final Path dir;

    /** Results under {@code dir}, created when absent. */
    public Results(Path dir) {
        this.dir = dir.toAbsolutePath();
        try {
            Files.createDirectories(this.dir.resolve("series"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The results directory. */
    public Path dir() {
        return dir;
    }

    /** Appends {@code r} to the summary and remembers it for {@link #drainRecent()}. */
    public void record(PhaseResult r) {
        Path file = dir.resolve(SUMMARY);
        try {
            synchronized (RECENT) {
                if (!Files.exists(file)) {
                    Files.writeString(file, String.join("\t", PhaseResult.COLUMNS) + "\n", StandardCharsets.UTF_8);
                }
                Files.writeString(file, r.toTsv() + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
                RECENT.add(r);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The CSV file of the series {@code name}. */
    public Path series(String name) {
        return dir.resolve("series").resolve(name + ".csv");
    }

    /** Results recorded in this JVM since the last call, oldest first. */
    public static List<PhaseResult> drainRecent() {
        synchronized (RECENT) {
            List<PhaseResult> out = new ArrayList<>(RECENT);
            RECENT.clear();
            return out;
        }
    }

    /** Every result in {@code dir}'s summary, in the order written. */
    public static List<PhaseResult> read(Path dir) throws IOException {
        List<PhaseResult> out = new ArrayList<>();
        Path file = dir.resolve(SUMMARY);
        if (!Files.exists(file)) {
            return out;
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 1; i < lines.size(); i++) {
            if (!lines.get(i).isBlank()) {
                out.add(PhaseResult.fromTsv(lines.get(i)));
            }
        }
        return out;
    }
}
