/* SPDX-License-Identifier: MIT */
/*
 * mandelbrot.c - render the Mandelbrot set with clove_for over rows and
 * write it as a binary PPM (P6) image.
 *
 * Rows cost very different amounts of work (rows through the set iterate
 * to the limit at every pixel, rows far from it stop at once), which is
 * where a fixed grain size goes wrong: clove_for has none, it splits the
 * remaining rows whenever a heartbeat finds an idle worker. Each body call
 * writes only its own rows of the image, so no synchronisation is needed.
 *
 * The same image is then computed again by a plain sequential loop and the
 * two must be identical byte for byte; both checksums are printed.
 *
 * usage: mandelbrot [out.ppm [width [threads]]]
 *        (default mandelbrot.ppm, 640 wide, height = width * 5 / 8;
 *         threads 0 = one per CPU)
 */
#include <clove.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITER 1000

struct image {
    size_t width, height;
    unsigned char *rgb; /* width * height * 3 bytes, row by row */
};

/* Colour of one pixel: black inside the set, outside a colour ramp by the
 * number of iterations it took to escape. Plain C doubles, so
 * the parallel and the sequential image are bit-identical. */
static void pixel(const struct image *im, size_t x, size_t y, unsigned char *out)
{
    /* The view: real part [-2.2, 0.8], imaginary part centred on 0. */
    double scale = 3.0 / (double)im->width;
    double cr = -2.2 + ((double)x + 0.5) * scale;
    double ci = ((double)y + 0.5 - (double)im->height / 2) * scale;
    double zr = 0, zi = 0, zr2 = 0, zi2 = 0;
    unsigned i = 0;
    while (i < MAX_ITER && zr2 + zi2 <= 4.0) {
        zi = 2 * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        zr2 = zr * zr;
        zi2 = zi * zi;
        i++;
    }
    if (i == MAX_ITER) {
        out[0] = out[1] = out[2] = 0;
        return;
    }
    /* t in [0, 1): grows slowly with the escape time. */
    double t = (double)i / (double)(i + 24);
    out[0] = (unsigned char)(255 * 9 * (1 - t) * t * t * t);
    out[1] = (unsigned char)(255 * 15 * (1 - t) * (1 - t) * t * t);
    out[2] = (unsigned char)(255 * 8.5 * (1 - t) * (1 - t) * (1 - t) * t);
}

static void render_rows(const struct image *im, size_t y0, size_t y1)
{
    for (size_t y = y0; y < y1; y++)
        for (size_t x = 0; x < im->width; x++)
            pixel(im, x, y, im->rgb + 3 * (y * im->width + x));
}

/* clove_for body: rows [lo, hi). */
static void rows_body(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    render_rows(ctx, lo, hi);
}

static void render(clove_task *t, void *p)
{
    struct image *im = p;
    clove_for(t, 0, im->height, rows_body, im);
}

/* FNV-1a, 64 bits: a checksum to print and compare. */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "mandelbrot.ppm";
    size_t width = argc > 2 ? strtoull(argv[2], NULL, 10) : 640;
    unsigned threads = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 0;
    if (width < 8 || width > 20000)
        return fprintf(stderr, "mandelbrot: width must be 8 .. 20000\n"), 2;
    size_t height = width * 5 / 8, bytes = width * height * 3;

    struct image par = {width, height, malloc(bytes)};
    struct image seq = {width, height, malloc(bytes)};
    if (par.rgb == NULL || seq.rgb == NULL)
        return fprintf(stderr, "mandelbrot: out of memory\n"), 2;

    clove_pool *pool;
    clove_config cfg = {.threads = threads};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0)
        return fprintf(stderr, "clove_pool_create: error %d\n", rc), 2;
    clove_pool_run(pool, render, &par); /* in parallel */
    render_rows(&seq, 0, height);      /* the reference, sequentially */

    uint64_t hp = fnv1a(par.rgb, bytes), hs = fnv1a(seq.rgb, bytes);
    int ok = hp == hs && memcmp(par.rgb, seq.rgb, bytes) == 0;

    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return perror(path), 2;
    fprintf(f, "P6\n%zu %zu\n255\n", width, height);
    fwrite(par.rgb, 1, bytes, f);
    if (fclose(f) != 0)
        return perror(path), 2;

    printf("mandelbrot: %zux%zu on %u threads -> %s; checksum %016" PRIx64
           ", sequential %016" PRIx64 " (%s)\n", width, height,
           clove_pool_threads(pool), path, hp, hs, ok ? "ok" : "WRONG");
    clove_pool_destroy(pool);
    free(par.rgb);
    free(seq.rgb);
    return ok ? 0 : 1;
}
