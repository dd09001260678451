package io.betree.bench.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** Sizes of the files in a store's directory. */
final class DirectorySize {
    private DirectorySize() {
    }

    /**
     * Sum of the sizes of the regular files under {@code dir}, less files whose name starts with
     * {@code skipPrefix}. An engine may delete files while they are counted (RocksDB rotates its
     * log): a file that vanishes during the walk counts as gone.
     */
    static long of(Path dir, String skipPrefix) {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        long[] total = new long[1];
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()
                            && (skipPrefix == null || !file.getFileName().toString().startsWith(skipPrefix))) {
                        total[0] += attrs.size();
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw e;
                }
            });
        } catch (NoSuchFileException e) {
            return total[0];
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return total[0];
    }
}
