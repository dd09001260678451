package io.betree.internal.layers;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads compiled classes to find which classes they refer to: every class name and type descriptor
 * in a class file's constant pool. Working on bytecode rather than source means a fully qualified
 * name in code counts and a name in a comment does not. Used by each module's layering test.
 */
public final class ClassReferences {
    private ClassReferences() {
    }

    /**
     * The references from the classes under {@code classesDir} that match {@code forbidden} (a
     * pattern over internal names such as {@code io/betree/internal/txn/WriteOp}), each as
     * "referring class -> matched name", sorted.
     */
    public static List<String> matching(Path classesDir, Pattern forbidden) throws IOException {
        TreeSet<String> found = new TreeSet<>();
        List<Path> classes;
        try (Stream<Path> files = Files.walk(classesDir)) {
            classes = files.filter(p -> p.toString().endsWith(".class")).toList();
        }
        if (classes.isEmpty()) {
            throw new IllegalStateException("no classes under " + classesDir + "; compile first");
        }
        for (Path c : classes) {
            try (InputStream in = Files.newInputStream(c)) {
                for (String s : constantPoolStrings(new DataInputStream(in))) {
                    var m = forbidden.matcher(s);
                    while (m.find()) {
                        found.add(classesDir.relativize(c) + " -> " + m.group());
                    }
                }
            }
        }
        return new ArrayList<>(found);
    }

    /** The UTF-8 entries of a class file's constant pool (names, descriptors, signatures, strings). */
    private static List<String> constantPoolStrings(DataInputStream in) throws IOException {
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort(); // minor version
        in.readUnsignedShort(); // major version
        int count = in.readUnsignedShort();
        List<String> strings = new ArrayList<>();
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> strings.add(in.readUTF());
                case 3, 4 -> in.skipBytes(4); // int, float
                case 5, 6 -> { // long, double: take two slots
                    in.skipBytes(8);
                    i++;
                }
                case 7, 8, 16, 19, 20 -> in.skipBytes(2); // class, string, method type, module, package
                case 9, 10, 11, 12, 17, 18 -> in.skipBytes(4); // refs, name-and-type, dynamic
                case 15 -> in.skipBytes(3); // method handle
                default -> throw new IOException("unknown constant pool tag " + tag);
            }
        }
        return strings;
    }
}
