package io.betree.internal.txn.layers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.betree.internal.layers.ClassReferences;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The build holds the layering: txn never refers to a class of the public API ({@code io.betree.*}). */
class TxnLayeringTest {
    private static final Pattern PUBLIC_API = Pattern.compile("io/betree/[A-Z][A-Za-z0-9_$]*");

    @Test
    void txnRefersToNothingAboveIt() throws IOException {
        List<String> upward = ClassReferences.matching(Path.of("target", "classes"), PUBLIC_API);
        assertEquals(List.of(), upward, "txn must not depend on the API; pass an interface down instead");
    }
}
