# Sourced by the training scripts here: unpacks the Open MPI packages that
# train_gpt links (libwebtensor_dist) from the debs/ folder beside the
# script into /tmp/ompi, skipping the two the machine already has, and sets
# MPILIB to their library folders. Copy it along with the script.
P=/tmp/ompi
rm -rf "$P" && mkdir -p "$P"
for f in "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"/debs/*.deb; do
    case "$f" in
    *libudev1_*) ldconfig -p | grep -q "libudev.so.1 " && continue ;;
    *libatomic1_*) ldconfig -p | grep -q "libatomic.so.1 " && continue ;;
    esac
    dpkg -x "$f" "$P"
done
MPILIB=$P/usr/lib/x86_64-linux-gnu:$P/usr/lib/x86_64-linux-gnu/openmpi/lib:$P/lib/x86_64-linux-gnu
