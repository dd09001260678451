package io.betree.bench.workload;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** A CSV time series written as a workload runs: a header line, then one line per point. */
public final class Series implements AutoCloseable {
    private final BufferedWriter out;

    /** A new series in {@code file} with the given column names. */
    public Series(Path file, String... columns) {
        try {
            Files.createDirectories(file.getParent());
            out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
            out.write(String.join(",", columns));
            out.newLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Appends a point. */
    public void add(double... values) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < values.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(String.format(Locale.ROOT, "%.6g", values[i]));
        }
        try {
            out.write(b.toString());
            out.newLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
