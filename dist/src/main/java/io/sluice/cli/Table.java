package io.sluice.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A plain-text table with a header row and left-aligned columns sized to their widest cell. */
public final class Table
{
    private final String[] header;
    private final List<String[]> rows = new ArrayList<>();

    public Table(final String... header)
    {
        this.header = header.clone();
    }

    public Table row(final Object... cells)
    {
        final String[] row = new String[header.length];
        Arrays.fill(row, "");
        for (int i = 0; i < Math.min(cells.length, header.length); i++)
        {
            row[i] = cells[i] == null ? "" : String.valueOf(cells[i]);
        }
        rows.add(row);
        return this;
    }

    public int size()
    {
        return rows.size();
    }

    public void print(final PrintStream out)
    {
        final int[] widths = new int[header.length];
        for (int i = 0; i < header.length; i++)
        {
            widths[i] = header[i].length();
        }
        for (final String[] row : rows)
        {
            for (int i = 0; i < row.length; i++)
            {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        printRow(out, header, widths);
        for (final String[] row : rows)
        {
            printRow(out, row, widths);
        }
        out.flush();
    }

    private static void printRow(final PrintStream out, final String[] cells, final int[] widths)
    {
        final StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.length; i++)
        {
            line.append(cells[i]);
            if (i < cells.length - 1)
            {
                line.append(" ".repeat(widths[i] - cells[i].length() + 2));
            }
        }
        out.println(line.toString().stripTrailing());
    }
}
