/* The kernel's floor for bench_extract_small --floor: the same files made the way gamepak makes
   them (folders made once and opened O_DIRECTORY|O_NOFOLLOW; each file created relative to its
   folder with O_CREAT|O_EXCL|O_NOFOLLOW, filled with one sendfile from the pack, closed), with
   no Python at all, on WORKERS forked processes taking fixed batches in turn. What is left
   between this and gamepak is Python: its start, the planning before the fork, the loop per file.

   usage: _extract_floor JOBS PACK OUT WORKERS
   JOBS: "FOLDERS FILES", then one folder path a line (parents first), then per file
   "FOLDER_NUMBER OFFSET SIZE NAME" (folder 0 is OUT itself, the others count from 1). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s JOBS PACK OUT WORKERS\n", argv[0]);
        return 2;
    }
    FILE *jobs = fopen(argv[1], "r");
    int source = open(argv[2], O_RDONLY | O_CLOEXEC);
    int workers = atoi(argv[4]);
    int folders, files;
    if (!jobs || source < 0 || fscanf(jobs, "%d %d", &folders, &files) != 2 || mkdir(argv[3], 0755)) {
        perror("start");
        return 1;
    }
    int *folder_fds = malloc(sizeof(int) * (folders + 1));
    char name[4096];
    folder_fds[0] = open(argv[3], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    for (int number = 1; number <= folders; number++) {
        if (fscanf(jobs, "%4095s", name) != 1 || mkdirat(folder_fds[0], name, 0755)) {
            perror("folder");
            return 1;
        }
        folder_fds[number] = openat(folder_fds[0], name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    int *folder_of = malloc(sizeof(int) * files);
    long *offsets = malloc(sizeof(long) * files), *sizes = malloc(sizeof(long) * files);
    char **names = malloc(sizeof(char *) * files);
    for (int file = 0; file < files; file++) {
        if (fscanf(jobs, "%d %ld %ld %4095s", &folder_of[file], &offsets[file], &sizes[file], name) != 4) {
            fprintf(stderr, "bad job %d\n", file);
            return 1;
        }
        const char *base = strrchr(name, '/');
        names[file] = strdup(base ? base + 1 : name);
    }
    int worker = 0;
    for (int other = 1; other < workers; other++) {
        if (fork() == 0) {
            worker = other;
            break;
        }
    }
    const int batch = 256;
    for (int start = worker * batch; start < files; start += workers * batch) {
        int stop = start + batch < files ? start + batch : files;
        for (int file = start; file < stop; file++) {
            int fd = openat(folder_fds[folder_of[file]], names[file],
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            off_t offset = offsets[file];
            if (fd < 0 || (sizes[file] && sendfile(fd, source, &offset, sizes[file]) != sizes[file])) {
                perror(names[file]);
                _exit(1);
            }
            close(fd);
        }
    }
    if (worker)
        _exit(0);
    int status, failed = 0;
    while (wait(&status) > 0)
        failed |= status != 0;
    return failed;
}
