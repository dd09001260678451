package io.betree.systest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What a crash of an open environment leaves on disk, for tests of recovery from the log alone. */
final class CrashImage {
    private CrashImage() {
    }

    /**
     * Copies the files of the environment open in {@code live} (its lock file aside) into
     * {@code image}, which it creates: call it with everything to keep synced and before the
     * environment closes, since a close checkpoints.
     */
    static void copy(Path live, Path image) throws IOException {
        Files.createDirectories(image);
        try (Stream<Path> files = Files.list(live)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (!f.getFileName().toString().endsWith(".lock")) {
                    Files.copy(f, image.resolve(f.getFileName()));
                }
            }
        }
    }
}
