package io.betree.bench.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Sizes of the files in a store's directory. */
final class DirectorySize {
    private DirectorySize() {
    }

    /** Sum of the sizes of the regular files under {@code dir}, less files whose name starts with {@code skipPrefix}. */
    static long of(Path dir, String skipPrefix) {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile)
                    .filter(p -> skipPrefix == null || !p.getFileName().toString().startsWith(skipPrefix))
                    .mapToLong(p -> {
                        try {
                            return Files.size(p);
                        } catch (IOException e) {
                            return 0;
                        }
                    }).sum();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
