package io.betree.internal.layers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The build holds the layering: core (storage, memory, cache, tree) never refers to a class of the
 * modules above it, txn ({@code io.betree.internal.log}, {@code .txn}, {@code .engine},
 * {@code io.betree.txn}) or the public API ({@code io.betree.*}).
 */
class CoreLayeringTest {
    /** Internal names of the packages above core, as they appear in class names and descriptors. */
    static final Pattern ABOVE_CORE = Pattern.compile(
            "io/betree/(internal/(log|txn|engine)/|txn/|[A-Z])[A-Za-z0-9_$/]*");

    @Test
    void coreRefersToNothingAboveIt() throws IOException {
        List<String> upward = ClassReferences.matching(Path.of("target", "classes"), ABOVE_CORE);
        assertEquals(List.of(), upward, "core must not depend on txn or the API; pass an interface down instead");
    }

    @Test
    void theScanFindsAReferenceThatExists() throws IOException {
        // This class calls ClassReferences, so its bytecode must show that reference.
        List<String> found = ClassReferences.matching(Path.of("target", "test-classes"),
                Pattern.compile("io/betree/internal/layers/ClassReferences\\b"));
        assertTrue(found.contains(Path.of("io", "betree", "internal", "layers", "CoreLayeringTest.class")
                + " -> io/betree/internal/layers/ClassReferences"), found.toString());
    }
}
