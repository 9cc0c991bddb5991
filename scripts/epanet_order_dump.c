/* EPANET 2.3.5's junction elimination order (smatrix.c's Order after reordernodes/genmmd), one
 * junction ID a line: the reference of tests/network/test_epanet_order.cpp
 * (data/networks/epanet-order/). A reference tool, not part of cgsolve; it reads EPANET's
 * internal Project struct, so it builds against EPANET's source tree (OpenWaterAnalytics/EPANET,
 * commit 473b87d), not against the installed library:
 *
 *   gcc -O2 -I EPANET/include -I EPANET/src -o epanet_order_dump scripts/epanet_order_dump.c \
 *       EPANET/src/*.c EPANET/src/util/*.c -lm
 *   ./epanet_order_dump NET.inp > NET.txt
 */
#include <stdio.h>
#include "epanet2_2.h"
#include "types.h"
int main(int argc, char** argv) {
  EN_Project ph;
  EN_createproject(&ph);
  int err = EN_open(ph, argv[1], "/dev/null", "");
  if (err > 100) { fprintf(stderr, "open %d\n", err); return 1; }
  err = EN_openH(ph);
  if (err > 100) { fprintf(stderr, "openH %d\n", err); return 1; }
  Project* pr = (Project*)ph;
  for (int k = 1; k <= pr->network.Njuncs; k++) printf("%s\n", pr->network.Node[pr->hydraul.smatrix.Order[k]].ID);
  return 0;
}
