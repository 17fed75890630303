package io.sluice.dist;

/** Entry point of sluice.jar; dispatches on the mode word. */
public final class SluiceMain
{
    private SluiceMain()
    {
    }

    public static void main(final String[] args)
    {
        System.err.println("usage: java -jar sluice.jar [standalone|broker|gateway|admin] [--prop=value ...]");
        System.exit(2);
    }
}
