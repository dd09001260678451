package io.betree.bench.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * Line and grouped-bar charts drawn with Java2D in headless mode and written as PNG. Small on
 * purpose: axes with round ticks (linear, or powers of ten when values span more than 50x), a
 * legend, value labels on bars, one fixed colour per engine.
 */
public final class Charts {
    private static final int WIDTH = 960;
    private static final int HEIGHT = 540;
    private static final int LEFT = 90;
    private static final int RIGHT = 30;
    private static final int TOP = 60;
    private static final int BOTTOM = 80;
    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
            new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b)};

    private Charts() {
    }

    /** The colour of {@code name}: engines keep theirs across every chart. */
    static Color color(String name, int index) {
        if (name.startsWith("betree")) {
            return PALETTE[0];
        }
        if (name.startsWith("rocksdb")) {
            return PALETTE[1];
        }
        if (name.startsWith("lmdb")) {
            return PALETTE[2];
        }
        return PALETTE[3 + Math.floorMod(index, 3)];
    }

    /** A chart's series: name to {xs, ys}. */
    public static void line(Path png, String title, String xLabel, String yLabel, Map<String, double[][]> series)
            throws IOException {
        double xMax = 0;
        double yMax = 0;
        for (double[][] s : series.values()) {
            for (int i = 0; i < s[0].length; i++) {
                if (Double.isFinite(s[0][i]) && Double.isFinite(s[1][i])) {
                    xMax = Math.max(xMax, s[0][i]);
                    yMax = Math.max(yMax, s[1][i]);
                }
            }
        }
        Axis x = Axis.linear(0, xMax);
        Axis y = Axis.linear(0, yMax);
        BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = start(img, title);
        frame(g, x, y, xLabel, yLabel, true);
        int i = 0;
        List<String> names = new ArrayList<>();
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            double[][] s = e.getValue();
            Path2D.Double p = new Path2D.Double();
            boolean started = false;
            for (int k = 0; k < s[0].length; k++) {
                if (!Double.isFinite(s[0][k]) || !Double.isFinite(s[1][k])) {
                    continue;
                }
                double px = px(x, s[0][k]);
                double py = py(y, s[1][k]);
                if (started) {
                    p.lineTo(px, py);
                } else {
                    p.moveTo(px, py);
                    started = true;
                }
            }
            g.setColor(color(e.getKey(), i++));
            g.setStroke(new BasicStroke(2f));
            g.draw(p);
            names.add(e.getKey());
        }
        legend(g, names);
        write(img, g, png);
    }

    /**
     * Grouped bars: {@code values[s][k]} is series {@code s} in group {@code k}; NaN draws no bar and
     * labels it n/a.
     */
    public static void bars(Path png, String title, String yLabel, List<String> groups, List<String> seriesNames,
            double[][] values) throws IOException {
        double min = Double.MAX_VALUE;
        double max = 0;
        for (double[] row : values) {
            for (double v : row) {
                if (Double.isFinite(v) && v > 0) {
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
            }
        }
        if (max == 0) {
            min = 1;
            max = 1;
        }
        Axis y = max / min > 50 ? Axis.log(min, max) : Axis.linear(0, max);
        Axis x = Axis.linear(0, Math.max(1, groups.size()));
        BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = start(img, title + (y.log ? " (log scale)" : ""));
        frame(g, x, y, "", yLabel, false);
        double groupWidth = (WIDTH - LEFT - RIGHT) / (double) Math.max(1, groups.size());
        double barWidth = groupWidth * 0.8 / Math.max(1, seriesNames.size());
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics fm = g.getFontMetrics();
        for (int k = 0; k < groups.size(); k++) {
            double gx = LEFT + k * groupWidth + groupWidth * 0.1;
            for (int s = 0; s < seriesNames.size(); s++) {
                double v = values[s][k];
                double bx = gx + s * barWidth;
                String label;
                int top;
                if (Double.isFinite(v) && v > 0) {
                    top = (int) Math.round(py(y, v));
                    g.setColor(color(seriesNames.get(s), s));
                    g.fillRect((int) bx, top, (int) Math.max(1, barWidth - 2), HEIGHT - BOTTOM - top);
                    label = Report.compact(v);
                } else {
                    top = HEIGHT - BOTTOM;
                    label = "n/a";
                }
                g.setColor(Color.DARK_GRAY);
                g.drawString(label, (int) (bx + (barWidth - 2 - fm.stringWidth(label)) / 2), top - 3);
            }
            g.setColor(Color.BLACK);
            String name = groups.get(k);
            g.drawString(name, (int) (LEFT + k * groupWidth + (groupWidth - fm.stringWidth(name)) / 2),
                    HEIGHT - BOTTOM + 18);
        }
        legend(g, seriesNames);
        write(img, g, png);
    }

    private static Graphics2D start(BufferedImage img, String title) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, HEIGHT);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString(title, LEFT, 30);
        return g;
    }

    private static void frame(Graphics2D g, Axis x, Axis y, String xLabel, String yLabel, boolean xTicks) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics fm = g.getFontMetrics();
        for (double t : y.ticks()) {
            int py = (int) Math.round(py(y, t));
            g.setColor(new Color(0xe6e6e6));
            g.drawLine(LEFT, py, WIDTH - RIGHT, py);
            g.setColor(Color.DARK_GRAY);
            String s = Report.compact(t);
            g.drawString(s, LEFT - 6 - fm.stringWidth(s), py + 4);
        }
        if (xTicks) {
            for (double t : x.ticks()) {
                int px = (int) Math.round(px(x, t));
                g.setColor(Color.DARK_GRAY);
                g.drawLine(px, HEIGHT - BOTTOM, px, HEIGHT - BOTTOM + 4);
                String s = Report.compact(t);
                g.drawString(s, px - fm.stringWidth(s) / 2, HEIGHT - BOTTOM + 18);
            }
        }
        g.setColor(Color.BLACK);
        g.drawLine(LEFT, TOP, LEFT, HEIGHT - BOTTOM);
        g.drawLine(LEFT, HEIGHT - BOTTOM, WIDTH - RIGHT, HEIGHT - BOTTOM);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        fm = g.getFontMetrics();
        g.drawString(xLabel, LEFT + (WIDTH - LEFT - RIGHT - fm.stringWidth(xLabel)) / 2, HEIGHT - BOTTOM + 42);
        AffineTransform saved = g.getTransform();
        g.rotate(-Math.PI / 2);
        g.drawString(yLabel, -(TOP + (HEIGHT - TOP - BOTTOM + fm.stringWidth(yLabel)) / 2), 22);
        g.setTransform(saved);
    }

    private static void legend(Graphics2D g, List<String> names) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        FontMetrics fm = g.getFontMetrics();
        int x = LEFT;
        int y = HEIGHT - 18;
        for (int i = 0; i < names.size(); i++) {
            g.setColor(color(names.get(i), i));
            g.fillRect(x, y - 10, 14, 10);
            g.setColor(Color.BLACK);
            g.drawString(names.get(i), x + 18, y);
            x += 18 + fm.stringWidth(names.get(i)) + 24;
        }
    }

    private static void write(BufferedImage img, Graphics2D g, Path png) throws IOException {
        g.dispose();
        Files.createDirectories(png.toAbsolutePath().getParent());
        if (!ImageIO.write(img, "png", png.toFile())) {
            throw new IOException("no PNG writer");
        }
    }

    private static double px(Axis x, double v) {
        return LEFT + x.fraction(v) * (WIDTH - LEFT - RIGHT);
    }

    private static double py(Axis y, double v) {
        return HEIGHT - BOTTOM - y.fraction(v) * (HEIGHT - TOP - BOTTOM);
    }

    /** A linear axis from zero or a base-10 logarithmic one, with round ticks. */
    private static final class Axis {
        final double lo;
        final double hi;
        final boolean log;
        final double step;

        private Axis(double lo, double hi, boolean log, double step) {
            this.lo = lo;
            this.hi = hi;
            this.log = log;
            this.step = step;
        }

        static Axis linear(double lo, double max) {
            double span = max <= lo ? 1 : max - lo;
            double raw = span / 6;
            double mag = Math.pow(10, Math.floor(Math.log10(raw)));
            double norm = raw / mag;
            double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
            return new Axis(lo, lo + Math.ceil(span / step * 1.05) * step, false, step);
        }

        static Axis log(double min, double max) {
            return new Axis(Math.pow(10, Math.floor(Math.log10(min))), Math.pow(10, Math.ceil(Math.log10(max * 1.5))),
                    true, 10);
        }

        double fraction(double v) {
            if (log) {
                double c = Math.max(v, lo);
                return (Math.log10(c) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
            }
            return (v - lo) / (hi - lo);
        }

        List<Double> ticks() {
            List<Double> t = new ArrayList<>();
            if (log) {
                for (double v = lo; v <= hi * 1.0001; v *= 10) {
                    t.add(v);
                }
            } else {
                for (double v = lo; v <= hi + step / 1000; v += step) {
                    t.add(v);
                }
            }
            return t;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "Axis[%g..%g%s]", lo, hi, log ? " log" : "");
        }
    }
}
